"""app.record shows its progress as episodes become ready (#38 item 5): episodes done of all, dataset frames per
second and an ETA, and each episode's outcome, before the dataset is finished."""

import io

import numpy as np

from app.record import main
from app.recording.progress import RecordProgress
from tests.conftest import ROOT


class _Clock:
    """Seconds that advance only when told (no wall clock in the test)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_each_ready_episode_is_a_line_with_its_outcome_pace_and_eta(caplog):
    clock, stream = _Clock(), io.StringIO()
    progress = RecordProgress(4, stream=stream, clock=clock)
    with caplog.at_level("INFO", logger="app.record"):
        for k, outcome in enumerate([(True, ""), (False, "dropped the object"), (True, ""), (True, "")]):
            clock.now = 2.0 * (k + 1)  # an episode every 2 s
            progress.episode_done(k, outcome, 60)
    progress.close()
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "episode 0 ready (1/4): success; 60 frames, 30.0 frames/s"
    assert lines[1] == "episode 1 ready (2/4): failed: dropped the object; 60 frames, 30.0 frames/s, ETA 4.0 s"
    assert lines[2].endswith("ETA 2.0 s") and lines[3] == "episode 3 ready (4/4): success; 60 frames, 30.0 frames/s"
    assert stream.getvalue() == ""  # off a terminal the lines above are the progress


def test_a_recording_reports_every_episode_as_it_is_ready_before_it_ends(tmp_path, caplog):
    config = str(ROOT / "configs/single_ik.yaml")
    with caplog.at_level("INFO", logger="app.record"):
        assert main([config, "--cameras", "none", "--episodes", "3", "--duration", "0.5", "--out", str(tmp_path / "ds"),
                     "--keep-failed"]) == 0
    lines = [r.getMessage() for r in caplog.records]
    ready = [i for i, line in enumerate(lines) if " ready (" in line]
    end = next(i for i, line in enumerate(lines) if "episodes written to" in line)
    assert [lines[i].split(" ready ")[1][:5] for i in ready] == ["(1/3)", "(2/3)", "(3/3)"]
    assert max(ready) < end and all("frames/s" in lines[i] for i in ready)
    assert all(("success" in lines[i]) or ("failed: " in lines[i]) for i in ready)


def test_a_camera_recording_on_workers_is_planned_one_episode_a_block_so_each_is_reported_when_ready():
    """On Ray workers an episode is reported when its block comes back: blocks of 4 meant 8 silent minutes at the
    start of a 10-episode camera recording under load. With cameras each block is one episode (their pictures
    dwarf the simulation a batch shares); without, the batched blocks stay."""
    from app.config.loader import load_run_config
    from app.recording.blocks import block_plan

    cameras = load_run_config(ROOT / "configs/pick_place_cameras.yaml", n_envs=10)
    plain = load_run_config(ROOT / "configs/pick_place.yaml", n_envs=10)
    assert cameras.scene_config.cameras and not plain.scene_config.cameras
    assert [item[1].tolist() for item in block_plan(cameras, 10, 2, None)] == [[e] for e in range(10)]
    batched = block_plan(plain, 10, 2, None)
    while batched.take(0) is not None:
        pass
    assert len(batched.items) < 10 and np.concatenate(batched.envs).tolist() == list(range(10))
