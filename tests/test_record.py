"""app.record: a run's environments become dataset episodes of the measured joints, in either format and unit
convention; failed episodes are left out or kept flagged."""

import json

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.dataset import convert, dataset_units, load_dataset, trossen_names
from app.episode.motion_factory import run_motion
from app.record import main
from tests.conftest import ROOT

CONFIG = str(ROOT / "configs/single_ik.yaml")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "ds"
    assert main([CONFIG, "--cameras", "none", "--episodes", "2", "--out", str(out)]) == 0
    return out


def test_recorded_episodes_are_the_measured_joints_and_end_on_the_target(recorded, widowx):
    """Two 4 s episodes at 30 fps in the one-arm layout; action k = state k + 1; FK of the last state (the
    WidowX AI's model, both fingers at the gripper value) is on the circle target of that time (5 mm)."""
    ds = load_dataset(recorded)
    run = load_run_config(CONFIG, n_envs=2)
    assert (ds.fps, ds.robot_type, ds.state_names) == (30.0, "trossen_ai_solo", tuple(trossen_names(1)))
    assert [len(e.state) for e in ds.episodes] == [120, 120] and {e.task for e in ds.episodes} == {"circle"}
    targets = run_motion(run)(119 / 30 + 1 / run.scene_config.physics_hz)
    for e in ds.episodes:
        np.testing.assert_allclose(e.action[:-1], e.state[1:], atol=1e-6)
        q = np.concatenate([e.state[-1], e.state[-1, 6:]])
        pos, _ = widowx.forward_kinematics(q, ["ee_gripper_link"])
        assert np.linalg.norm(pos[0] - targets.pos[e.index, 0]) < 5e-3


def test_act_hdf5_in_trossen_units_holds_the_same_episodes(recorded, tmp_path):
    """--format act-hdf5 --trossen-units: units detected as trossen; converted back, the same joints."""
    assert main([CONFIG, "--cameras", "none", "--episodes", "2", "--out", str(tmp_path / "act"), "--format", "act-hdf5",
                 "--trossen-units"]) == 0
    act, lerobot = load_dataset(tmp_path / "act"), load_dataset(recorded)
    assert dataset_units(act).units == "trossen" and act.fps == 30.0
    for a, b in zip(act.episodes, lerobot.episodes, strict=True):
        np.testing.assert_allclose(convert(a.state, "trossen", "si"), b.state, atol=1e-5)


def test_failed_episodes_are_left_out_or_kept_flagged(tmp_path, caplog):
    """At 0.3 s no environment has reached its target: none written, each listed; --keep-failed keeps them
    with the reason in their task."""
    with caplog.at_level("WARNING", logger="app.record"):
        assert main([CONFIG, "--cameras", "none", "--episodes", "2", "--duration", "0.3", "--out", str(tmp_path / "none")]) == 0
    assert [r.getMessage() for r in caplog.records] == [f"episode {k} failed: target not reached (left out)"
                                                        for k in (0, 1)]
    assert not (tmp_path / "none" / "meta").exists()
    assert main([CONFIG, "--cameras", "none", "--episodes", "2", "--duration", "0.3", "--out", str(tmp_path / "kept"),
                 "--keep-failed"]) == 0
    assert {e.task for e in load_dataset(tmp_path / "kept").episodes} == {"circle [failed: target not reached]"}


def test_file_limit_options_roll_files_over_and_the_dataset_reads_back_the_same_episodes(recorded, tmp_path):
    """--chunks-size 1 --data-file-mb 1e-6 --video-file-mb 1e-6: episode 1's data and metadata files pass to
    chunk-001/file-000 (a file a chunk, every file full after one episode); info.json records the three limits;
    our reader loads the same episodes as the recording with lerobot's default limits (one file)."""
    out = tmp_path / "rolled"
    assert main([CONFIG, "--cameras", "none", "--episodes", "2", "--out", str(out), "--chunks-size", "1", "--data-file-mb", "1e-6",
                 "--video-file-mb", "1e-6"]) == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.glob("data/*/*.parquet")) == [
        "data/chunk-000/file-000.parquet", "data/chunk-001/file-000.parquet"]
    assert len(list(out.glob("meta/episodes/chunk-*/file-*.parquet"))) == 2
    assert len(list(recorded.glob("data/*/*.parquet"))) == 1
    info = json.loads((out / "meta/info.json").read_text())
    assert (info["chunks_size"], info["data_files_size_in_mb"], info["video_files_size_in_mb"]) == (1, 1e-6, 1e-6)
    rolled, plain = load_dataset(out), load_dataset(recorded)
    for a, b in zip(rolled.episodes, plain.episodes, strict=True):
        assert a.index == b.index and a.task == b.task
        np.testing.assert_array_equal(a.state, b.state)
        np.testing.assert_array_equal(a.action, b.action)


@pytest.mark.parametrize("extra, words", [
    (["--chunks-size", "0"], "--chunks-size must be a whole number of files per chunk folder > 0, got 0"),
    (["--data-file-mb", "-1"], "--data-file-mb must be a size in MiB > 0, got -1.0"),
    (["--video-file-mb", "nan"], "--video-file-mb must be a size in MiB > 0, got nan"),
    (["--data-file-mb", "inf"], "--data-file-mb must be a size in MiB > 0, got inf"),
    (["--chunks-size", "5", "--format", "act-hdf5"], "--chunks-size: LeRobot's file limits apply to --format lerobot"),
])
def test_bad_file_limits_are_one_line_errors_naming_the_option(tmp_path, capsys, extra, words):
    """Exit 2 before anything runs, the last stderr line naming the option and what it must be; no folder made."""
    assert main([CONFIG, "--cameras", "none", "--episodes", "1", "--out", str(tmp_path / "ds"), *extra]) == 2
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "ds").exists()


def test_a_limit_other_than_the_continued_datasets_own_is_a_one_line_error(recorded, capsys):
    """--out holding a dataset written with lerobot's defaults: another --data-file-mb is refused (the writer
    keeps the dataset's own limits), before anything is simulated; the dataset stays as it was."""
    before = (recorded / "meta/info.json").read_text()
    assert main([CONFIG, "--cameras", "none", "--episodes", "1", "--out", str(recorded), "--data-file-mb", "5"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--data-file-mb 5" in last and "data_files_size_in_mb 100" in last
    assert (recorded / "meta/info.json").read_text() == before
