"""app.sweep: one episode per seed and setting, a summary over them, failures reported not fatal, finished
episodes skipped on a re-run, and the same figures on Ray workers."""

import json

import pytest

from app.errors import ConfigError
from app.sweep import main, parse_seeds, parse_sets
from tests.conftest import ROOT

CONFIG = str(ROOT / "configs" / "batched_ik.yaml")
ARGS = [CONFIG, "--seeds", "0:3", "--set", "duration=0.3", "--set", "n_envs=2"]


def test_seed_and_setting_grammar():
    assert parse_seeds("2:5") == [2, 3, 4] and parse_seeds("1,7") == [1, 7] and parse_seeds("3") == [3]
    assert parse_sets(["a.b=1", "a.b=2", "c=[0, 1]"]) == [{"a.b": 1, "c": [0, 1]}, {"a.b": 2, "c": [0, 1]}]
    with pytest.raises(ConfigError, match="--seeds must be"):
        parse_seeds("a:b")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_sets(["gain"])


def test_sweep_writes_reports_and_summary_reports_a_failed_episode_and_skips_finished_ones(tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "seed0001_duration=0.3_n_envs=2").write_text("in the way")  # this episode cannot write its folder
    assert main(ARGS + ["--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["all"]["episodes"] == 3 and summary["all"]["failed_episodes"] == 1
    assert summary["failed"][0]["episode"] == "seed0001_duration=0.3_n_envs=2"
    assert (out / "summary.png").stat().st_size > 1000
    assert (out / "seed0000_duration=0.3_n_envs=2" / "report.json").is_file()
    stamp = (out / "seed0000_duration=0.3_n_envs=2" / "report.json").stat().st_mtime_ns
    assert main(ARGS + ["--out", str(out)]) == 0  # re-run: the finished episodes are not run again
    assert (out / "seed0000_duration=0.3_n_envs=2" / "report.json").stat().st_mtime_ns == stamp


def test_a_bad_setting_is_refused_before_any_episode(tmp_path, capsys):
    assert main([CONFIG, "--set", "controller.gainn=2", "--out", str(tmp_path / "s")]) == 2
    assert "gainn" in capsys.readouterr().err and not (tmp_path / "s").exists()


@pytest.mark.slow
def test_ray_workers_give_the_same_summary(tmp_path, shared_ray):
    assert main(ARGS + ["--out", str(tmp_path / "one")]) == 0
    assert main(ARGS + ["--workers", "2", "--out", str(tmp_path / "two")]) == 0
    one, two = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("one", "two"))
    assert one["all"] == two["all"] and one["episodes"] == two["episodes"]


def test_settings_that_give_one_folder_are_refused(tmp_path, capsys):
    args = [CONFIG, "--seeds", "0", "--set", "task.quat=[0, 1, 0, 0]", "--set", "task.quat=[0 ,1, 0, 0]"]
    assert main(args + ["--out", str(tmp_path / "s")]) == 2
    assert "same episode folder" in capsys.readouterr().err


def test_a_sweep_of_a_pick_rates_its_placements_not_the_arms_reach():
    """An episode whose arms reached their last targets but placed nothing is a failure, with its reasons."""
    from app.sweep import summarize

    def summary(placed, failed):
        return {"ok": True, "summary": {"reached": 4, "n_envs": 4, "placed": placed, "failed": failed,
                                        "pos_err_final_max_m": 1e-4, "rot_err_final_max_rad": 1e-3,
                                        "stalled_final": 0, "solver_failed_final": 0}}
    jobs = [("pick.yaml", seed, "", f"out/seed_{seed}", False) for seed in (0, 1)]
    s = summarize(jobs, [summary(4, {}), summary(0, {"ungraspable": [0, 1, 2, 3]})], [""])
    assert s["all"]["success_rate"] == 0.5 and s["all"]["envs_placed_fraction"] == 0.5
    assert s["all"]["failure_reasons"] == {"ungraspable": 4}
    assert s["episodes"][1]["placed"] == 0 and s["episodes"][1]["failed"] == {"ungraspable": [0, 1, 2, 3]}


def test_an_out_folder_that_cannot_be_made_is_refused_before_any_episode(tmp_path, capsys, monkeypatch):
    import app.sweep

    ran = []
    monkeypatch.setattr(app.sweep, "run_episode", lambda *a: ran.append(a))
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code = main([str(ROOT / "configs" / "single_ik.yaml"), "--seeds", "0:2", "--out", str(blocker / "sweep")])
    assert code == 2 and ran == []
    assert "a_file/sweep" in capsys.readouterr().err.strip().splitlines()[-1]


def test_the_sweep_plot_numbers_whole_episodes_and_labels_errors_plainly():
    from app.sweep import summary_figure

    episodes = [{"ok": True, "pos_err_final_max_m": e} for e in (2e-5, 3e-4, 1.2e-3)]
    summary = {"episodes": episodes, "per_setting": [{"setting": {}, "success_rate": 1.0}],
               "all": {"episodes": 3, "failed_episodes": 0}}
    fig = summary_figure(summary, "s")
    fig.canvas.draw()
    ax = fig.axes[0]
    ticks = [x for x in ax.get_xticks() if ax.get_xlim()[0] <= x <= ax.get_xlim()[1]]
    assert ticks and all(float(x).is_integer() for x in ticks), ticks
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert labels and not any("10^" in s or "e-" in s for s in labels), labels
