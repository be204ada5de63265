"""The JSON report writer and the tracking-error plot."""

import json

import numpy as np
import pytest

from app.render.report import finite_or_none, plot_tracking, write_json_atomic


def test_json_is_written_whole_with_numpy_values_and_non_finite_as_null(tmp_path):
    path = write_json_atomic(tmp_path / "out" / "r.json", {"a": np.array([1.0, np.inf]), "b": np.int64(3),
                                                           "c": np.bool_(True), "d": finite_or_none(np.nan)})
    assert json.loads(path.read_text()) == {"a": [1.0, None], "b": 3, "c": True, "d": None}
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temp file left


def test_a_failed_write_leaves_the_previous_report_and_no_temp_file(tmp_path):
    path = write_json_atomic(tmp_path / "r.json", {"ok": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"bad": object()})
    assert json.loads(path.read_text()) == {"ok": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_plot_is_a_png(tmp_path):
    t = np.linspace(0, 1, 50)
    path = plot_tracking(tmp_path / "p.png", t, np.abs(np.sin(t))[:, None] * 1e-3, np.zeros((50, 1)), "demo")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_labels_are_plain_numbers_even_for_tiny_errors(tmp_path, monkeypatch):
    """Errors far below the symlog threshold used to get offset/scientific labels that overlapped "0"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from app.render.report import plot_tracking

    captured = []
    monkeypatch.setattr(plt.Figure, "savefig", lambda self, *a, **k: captured.append(self))
    t = np.linspace(0, 1, 50)
    plot_tracking(tmp_path / "p.png", t, np.full((50, 1), 2e-9), np.full((50, 1), 5e-8), "tiny")
    fig = captured[0]
    fig.canvas.draw()
    labels = [tick.get_text() for ax in fig.axes for tick in ax.get_yticklabels()]
    assert labels and all("e" not in s and "times" not in s for s in labels), labels
    assert all(not ax.yaxis.get_offset_text().get_text() for ax in fig.axes)


def test_the_tracking_plot_says_what_each_panels_colours_are():
    """Two arms: the position panel a colour per arm, the rotation panel one colour, each with its legend; one
    arm: a colour and a legend entry per environment (up to 8), else one colour labelled with the count."""
    from app.render.report import tracking_figure

    t = np.linspace(0.0, 1.0, 50)
    err = np.abs(np.random.default_rng(0).normal(size=(50, 3))) * 1e-3
    fig = tracking_figure(t, err, err, "two", {"left": err, "right": err * 2})
    pos_ax, rot_ax = fig.axes
    assert [x.get_text() for x in pos_ax.get_legend().get_texts()] == ["left", "right"]
    assert rot_ax.get_legend() is not None and len({l.get_color() for l in rot_ax.get_lines()}) == 1
    fig = tracking_figure(t, err, err, "one")
    assert [x.get_text() for x in fig.axes[1].get_legend().get_texts()] == ["env 0", "env 1", "env 2"]
    many = np.tile(err, (1, 6))
    fig = tracking_figure(t, many, many, "many")
    assert len({l.get_color() for l in fig.axes[0].get_lines()}) == 1
    assert "18 environments" in fig.axes[0].get_legend().get_texts()[0].get_text()


def test_a_motion_with_phases_gets_a_panel_of_how_many_environments_are_in_each():
    from app.episode.execute import phase_counts
    from app.render.report import tracking_figure

    t = np.linspace(0.0, 1.0, 4)
    codes = np.array([[0, 0], [0, 1], [1, 8], [8, 8]], dtype=np.int16)  # pre_grasp -> descend -> done
    counts = phase_counts({"t": t, "episode_codes": codes})
    assert list(counts) == ["pre_grasp", "descend", "done"] and counts["done"].tolist() == [0, 0, 1, 2]
    err = np.full((4, 2), 1e-4)
    fig = tracking_figure(t, err, err, "pick", None, counts)
    assert len(fig.axes) == 3
    assert [x.get_text() for x in fig.axes[2].get_legend().get_texts()] == ["pre_grasp", "descend", "done"]
    assert phase_counts({"t": t}) is None
