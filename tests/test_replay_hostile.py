"""app.replay and the dataset readers on damaged or hostile datasets (#41): every file that does not hold what
its format says ends the command in one line naming it (exit 2), and rates and lengths that would replay
something else or run for hours are refused before the simulation."""

import json
import shutil

import h5py
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.dataset import LeRobotWriter, load_dataset, write_act_episode
from app.errors import DatasetError
from app.replay import main
from tests.dataset_helpers import SPEC

SMALL = SPEC._replace(cameras=())


def _episode(n, value=0.0):
    from app.dataset import EpisodeFrames

    state = np.full((n, 7), value)
    state[:, 6] = 0.02
    return EpisodeFrames("pick", state, state.copy(), {})


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """Two 6-frame episodes, no cameras, LeRobot v3.0."""
    root = tmp_path_factory.mktemp("ds") / "ds"
    writer = LeRobotWriter(root, SMALL)
    writer.append(_episode(6))
    writer.append(_episode(6, 0.1))
    return root


@pytest.fixture()
def dataset(base, tmp_path):
    shutil.copytree(base, tmp_path / "ds")
    return tmp_path / "ds"


def _edit_info(root, **changes):
    info = json.loads((root / "meta/info.json").read_text())
    info.update(changes)
    (root / "meta/info.json").write_text(json.dumps(info))


def _edit_episodes(root, column, values):
    path = next((root / "meta/episodes").rglob("*.parquet"))
    table = pq.read_table(path)
    table = table.set_column(table.column_names.index(column), column, pa.array(values, table.schema.field(column).type))
    pq.write_table(table, path)


def _edit_data(root, column, row, value):
    """One value of ``column`` (a list column) in row ``row`` of the data file set to ``value``."""
    path = next((root / "data").rglob("*.parquet"))
    table = pq.read_table(path)
    rows = table.column(column).to_pylist()
    rows[row][0] = value
    table = table.set_column(table.column_names.index(column), column, pa.array(rows, table.schema.field(column).type))
    pq.write_table(table, path)


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


DAMAGE = {  # what is done to the dataset -> words of the one line
    "info not json": (lambda d: (d / "meta/info.json").write_text("{"), "meta/info.json: not a readable JSON"),
    "fps zero": (lambda d: _edit_info(d, fps=0), "meta/info.json: fps is 0; expected a rate > 0"),
    "fps negative": (lambda d: _edit_info(d, fps=-30), "fps is -30"),
    "fps a string": (lambda d: _edit_info(d, fps="30"), "fps is '30'"),
    "chunks_size 0": (lambda d: _edit_info(d, chunks_size=0), "chunks_size is 0; expected a whole number >= 1"),
    "total a float": (lambda d: _edit_info(d, total_episodes=1.5), "total_episodes is 1.5"),
    "state shape missing": (lambda d: _edit_info(d, features={"observation.state": {}, "action": {"shape": [7]}}),
                            "features.observation.state needs a shape"),
    "state shape wrong": (lambda d: _edit_info(d, features={"observation.state": {"shape": [5]},
                                                            "action": {"shape": [7]}}),
                          "column 'observation.state' does not hold 5 numbers a row"),
    "data truncated": (lambda d: _truncate(next((d / "data").rglob("*.parquet"))), "not a readable parquet file"),
    "episodes truncated": (lambda d: _truncate(next((d / "meta/episodes").rglob("*.parquet"))),
                           "not a readable parquet file"),
    "data missing": (lambda d: next((d / "data").rglob("*.parquet")).unlink(), "file-000.parquet: missing"),
    "length 100000": (lambda d: _edit_episodes(d, "length", [100000, 6]),
                      "episode 0: length 100000 and frames 0..5 disagree"),
    "length 0": (lambda d: _edit_episodes(d, "length", [0, 6]), "episode 0: length 0"),
    "a row missing": (lambda d: _edit_episodes(d, "episode_index", [0, 7]), "meta/info.json counts 2 episodes"),
    "data_path field unknown": (lambda d: _edit_info(d, data_path="data/{nope}/file.parquet"),
                                "data_path 'data/{nope}/file.parquet' is not a path template of the fields"),
    "a NaN state": (lambda d: _edit_data(d, "observation.state", 3, np.nan),
                    "column 'observation.state' holds nan at row 3"),
    "an infinite action": (lambda d: _edit_data(d, "action", 0, np.inf), "column 'action' holds inf at row 0"),
}


@pytest.mark.parametrize("what", sorted(DAMAGE))
def test_a_damaged_lerobot_dataset_is_one_line_naming_the_file(dataset, tmp_path, capsys, what):
    damage, words = DAMAGE[what]
    damage(dataset)
    assert main([str(dataset), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and words in err.strip().splitlines()[-1], err
    assert not (tmp_path / "out").exists()


def test_a_length_reaching_into_the_next_episode_is_not_read_as_one_episode(dataset):
    _edit_episodes(dataset, "length", [12, 6])
    with pytest.raises(DatasetError, match="length 12 and frames 0..5 disagree"):
        load_dataset(dataset)


@pytest.mark.parametrize("fps, words", [(0.001, "last 6000 s; a replay simulates at most 3600 s"),
                                        (1e6, "a replay needs a rate in (0, 240] Hz")])
def test_a_dataset_rate_that_would_replay_for_hours_or_faster_than_physics_is_refused(dataset, tmp_path, capsys,
                                                                                     fps, words):
    _edit_info(dataset, fps=fps)
    assert main([str(dataset), "--out", str(tmp_path / "out")]) == 2
    assert words in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf"])
def test_act_fps_must_be_a_positive_rate(dataset, tmp_path, capsys, value):
    assert main([str(dataset), "--act-fps", value, "--out", str(tmp_path / "out")]) == 2
    assert "--act-fps must be a rate in (0, 1000] Hz" in capsys.readouterr().err.strip().splitlines()[-1]


def _act(tmp_path, **datasets):
    path = tmp_path / "episode_0.hdf5"
    write_act_episode(path, np.zeros((5, 7)), np.zeros((5, 7)), np.zeros((5, 7)), {}, 30.0)
    with h5py.File(path, "a") as f:
        for key, value in datasets.items():
            name = "/" + key.replace("__", "/")
            if value is None:
                del f[name]
            elif isinstance(value, dict):
                f.attrs.update(value)
            else:
                del f[name]
                f[name] = value
    return path


@pytest.mark.parametrize("change, words", [
    (dict(action=np.zeros((4, 7))), "/action has shape (4, 7)"),
    (dict(observations__qpos=np.zeros(5)), "/observations/qpos has shape (5,)"),
    (dict(observations__qpos=np.zeros((5, 7), complex)), "expected (n >= 1, d) real numbers"),
    (dict(action=None), "no /action dataset"),
    (dict(observations__images__cam=np.zeros((5, 8, 8), np.uint8)), "/observations/images/cam has shape (5, 8, 8)"),
    (dict(attrs={"fps": 0.0}), "fps attribute is 0.0"),
    (dict(attrs={"joint_names": ["a", "b"]}), "joint_names has 2 names for 7 values"),
])
def test_a_malformed_act_file_is_one_line_naming_it(tmp_path, capsys, change, words):
    if "observations__images__cam" in change:
        path = _act(tmp_path)
        with h5py.File(path, "a") as f:
            f["/observations/images/cam"] = change["observations__images__cam"]
    elif "attrs" in change:
        path = _act(tmp_path, x=change["attrs"])
    else:
        path = _act(tmp_path, **change)
    assert main([str(path), "--out", str(tmp_path / "out")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(path) in last and words in last, last


def test_an_action_holding_nan_is_refused_naming_the_row(tmp_path, capsys):
    path = tmp_path / "episode_0.hdf5"
    action = np.zeros((5, 7))
    action[3, 2] = np.nan
    write_act_episode(path, np.zeros((5, 7)), np.zeros((5, 7)), action, {}, 30.0)
    assert main([str(path), "--out", str(tmp_path / "out")]) == 2
    assert "episode 0's action holds NaN or inf (row 3)" in capsys.readouterr().err.strip().splitlines()[-1]
