"""An interrupted recording leaves a LeRobot dataset that loads with the episodes finished before it, and a
writer opened on it again continues after them."""

import json
import signal
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

from app.dataset import LeRobotWriter, episode_frames, load_dataset
from app.dataset.video_segments import count_frames, frame_times
from tests.conftest import ROOT
from tests.dataset_helpers import CAM, SPEC, append_dying_before_info, episode, grey

VIDEO = f"videos/{CAM}/chunk-000/file-000.mp4"


def _assert_loads_with(root, lengths: list[int]) -> None:
    """The dataset at ``root`` reads as episodes of ``lengths``, each with its own states and frames."""
    ds = load_dataset(root)
    assert [len(e.state) for e in ds.episodes] == lengths
    for e in ds.episodes:
        np.testing.assert_array_equal(e.state, episode(e.index, len(e.state)).state)
        np.testing.assert_allclose(episode_frames(ds, e.index, CAM).astype(float), grey(e.index, len(e.state)),
                                   atol=3)
    assert not [p.name for p in root.rglob("*") if p.name.startswith((".app-partial", ".segment"))]


def test_a_failure_before_info_json_leaves_the_finished_episodes_and_a_new_writer_continues(tmp_path, monkeypatch):
    """Episode 2 dies after its data, video and episode rows were written but before info.json: the dataset
    still reads as episodes 0-1; a new writer cuts the leftovers and appends episode 2 where it belongs."""
    root = tmp_path / "ds"
    writer = LeRobotWriter(root, SPEC)
    writer.append(episode(0, 12))
    writer.append(episode(1, 15))
    append_dying_before_info(writer, episode(2, 9), monkeypatch)
    assert pq.read_metadata(root / "data/chunk-000/file-000.parquet").num_rows == 36  # mid-write: rows are there
    _assert_loads_with(root, [12, 15])

    resumed = LeRobotWriter(root, SPEC)
    assert (resumed.n_episodes, count_frames(root / VIDEO)) == (2, 27)
    assert resumed.append(episode(2, 9)) == 2
    _assert_loads_with(root, [12, 15, 9])
    np.testing.assert_allclose(frame_times(root / VIDEO), np.arange(36) / 30, atol=1e-4)
    assert json.loads((root / "meta/info.json").read_text())["total_frames"] == 36


def test_a_bad_episode_changes_nothing(tmp_path):
    """An episode with NaN in its state or a wrong camera size is refused before any file is touched."""
    root = tmp_path / "ds"
    writer = LeRobotWriter(root, SPEC)
    writer.append(episode(0, 10))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    bad = episode(1, 10)
    bad.state[3, 2] = np.nan
    with pytest.raises(Exception, match="NaN"):
        writer.append(bad)
    with pytest.raises(Exception, match="expected \\(10, 48, 64, 3\\) uint8"):
        writer.append(bad._replace(state=episode(1, 10).state, images={CAM: grey(1, 10)[:, :40]}))
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


CHILD = """
import sys
from app.dataset import LeRobotWriter
from tests.dataset_helpers import SPEC, episode
writer = LeRobotWriter(sys.argv[1], SPEC)
index = 0
while True:
    writer.append(episode(index, 20 + index))
    print("appended", index, flush=True)
    index += 1
"""


def test_sigint_while_recording_leaves_a_dataset_that_loads(tmp_path):
    """A process appending episodes without end gets SIGINT as soon as it reports its second episode: what
    it leaves loads with every counted episode intact and no temporary file. Python loses a KeyboardInterrupt
    raised inside an at-fork callback (logging's lock release while the writer starts ffmpeg: "Exception
    ignored"), so Ctrl-C is pressed again, as a user would, until the process ends."""
    root = tmp_path / "ds"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        for line in child.stdout:
            if line.strip() == "appended 1":
                break
        for _ in range(60):
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                continue
        assert child.poll() is not None and child.returncode != 0
    finally:
        child.kill()
    total = json.loads((root / "meta/info.json").read_text())["total_episodes"]
    assert total >= 2
    _assert_loads_with(root, [20 + i for i in range(total)])
