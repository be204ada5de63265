"""LeRobot v3.0 files roll over as lerobot's do (app.dataset.rollover): by size to the next file-NNN and, after
chunks_size files, to the next chunk-NNN; the episode metadata points at the files that hold each episode, and a
writer opened again after an interruption cuts the file a dying append had begun."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from app.dataset import LeRobotWriter, episode_frames, load_dataset
from app.dataset.rollover import FileLimits, next_file, table_rolls, video_rolls
from app.dataset.video_segments import count_frames
from tests.dataset_helpers import CAM, SPEC, append_dying_before_info, episode, grey

TINY = FileLimits(chunks_size=2, data_files_size_in_mb=1e-6, video_files_size_in_mb=1e-6)  # every episode a file
LENGTHS = [12, 15, 9, 10, 11]


def _rows(root):
    files = sorted((root / "meta/episodes").glob("*/*.parquet"))
    return sorted((r for p in files for r in pq.read_table(p).to_pylist()), key=lambda r: r["episode_index"])


def _assert_loads_with(root, lengths):
    ds = load_dataset(root)
    assert [len(e.state) for e in ds.episodes] == lengths
    for e in ds.episodes:
        np.testing.assert_array_equal(e.state, episode(e.index, len(e.state)).state)
        np.testing.assert_allclose(episode_frames(ds, e.index, CAM).astype(float), grey(e.index, len(e.state)), atol=3)


def test_the_rule_is_lerobots_file_then_chunk_and_size_reaching_the_limit():
    assert [next_file(w, 3) for w in ((0, 0), (0, 1), (0, 2), (4, 2))] == [(0, 1), (0, 2), (1, 0), (5, 0)]
    assert table_rolls(60.0, 100, 60, 96.0) and not table_rolls(60.0, 100, 59, 96.0)  # 60 + 0.6 * rows >= 96
    assert video_rolls(150.0, 50.0, 200.0) and not video_rolls(150.0, 49.9, 200.0)
    assert FileLimits.of_info({"chunks_size": 7}) == FileLimits(7, 100, 200)


def test_tiny_limits_put_every_episode_in_its_own_file_and_chunks_of_two_files(tmp_path):
    """Data, video and episode-metadata files roll over after every episode; chunk-001 after two files; each
    episode's row points at its files, its video from 0 s; info.json records the limits; every episode reads back
    (states and decoded frames)."""
    root = tmp_path / "ds"
    writer = LeRobotWriter(root, SPEC, TINY)
    for k, n in enumerate(LENGTHS):
        writer.append(episode(k, n))
    places = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]
    rows = _rows(root)
    for kind in ("data", f"videos/{CAM}", "meta/episodes"):
        assert [(r[f"{kind}/chunk_index"], r[f"{kind}/file_index"]) for r in rows] == places, kind
    for r, n in zip(rows, LENGTHS):
        c, f = r["data/chunk_index"], r["data/file_index"]
        data = pq.read_table(root / f"data/chunk-{c:03d}/file-{f:03d}.parquet")
        assert data.column("episode_index").to_pylist() == [r["episode_index"]] * n
        assert data.column("index").to_pylist() == list(range(r["dataset_from_index"], r["dataset_to_index"]))
        assert r[f"videos/{CAM}/from_timestamp"] == 0.0 and r[f"videos/{CAM}/to_timestamp"] == pytest.approx(n / 30)
        assert count_frames(root / f"videos/{CAM}/chunk-{c:03d}/file-{f:03d}.mp4") == n
    info = json.loads((root / "meta/info.json").read_text())
    assert (info["chunks_size"], info["data_files_size_in_mb"], info["video_files_size_in_mb"]) == TINY
    _assert_loads_with(root, LENGTHS)


def test_a_data_limit_between_episodes_fills_files_by_lerobots_estimate(tmp_path):
    """With one- and two-episode files of sizes s1, s2 (measured): a limit of 1.5 s1 takes one episode a file (the
    second's estimate, s1 + s1, reaches it); 2.5 s1 takes the second into the first file and the third where the
    estimate s2 + s2 / 2 says, while the camera's video stays in one file (the data files hold no pictures)."""
    no_video = SPEC._replace(cameras=())
    plain = lambda k: episode(k, 12)._replace(images={})  # noqa: E731
    sizes = []
    for k in (1, 2):
        writer = LeRobotWriter(tmp_path / f"n{k}", no_video)
        for i in range(k):
            writer.append(plain(i))
        sizes.append((tmp_path / f"n{k}/data/chunk-000/file-000.parquet").stat().st_size / 1024 ** 2)
    s1, s2 = sizes
    for limit, files, spec in ((1.5 * s1, [0, 1, 2], no_video), (2.5 * s1, [0, 0, int(1.5 * s2 >= 2.5 * s1)], SPEC)):
        root = tmp_path / f"x{limit}"
        writer = LeRobotWriter(root, spec, FileLimits(data_files_size_in_mb=limit))
        for k in range(3):
            writer.append(episode(k, 12) if spec.cameras else plain(k))
        assert [r["data/file_index"] for r in _rows(root)] == files
        if spec.cameras:
            assert [r[f"videos/{CAM}/file_index"] for r in _rows(root)] == [0, 0, 0]
            _assert_loads_with(root, [12, 12, 12])


def test_a_writer_opened_after_a_dying_append_cuts_the_files_it_had_begun(tmp_path, monkeypatch):
    """Episode 2 dies before info.json after writing its new data, video and metadata files: the dataset reads as
    episodes 0-1; a new writer (taking the limits from info.json) removes those files and writes episode 2 again."""
    root = tmp_path / "ds"
    writer = LeRobotWriter(root, SPEC, TINY)
    writer.append(episode(0, 12))
    writer.append(episode(1, 15))
    append_dying_before_info(writer, episode(2, 9), monkeypatch)
    begun = [root / "data/chunk-001/file-000.parquet", root / f"videos/{CAM}/chunk-001/file-000.mp4",
             root / "meta/episodes/chunk-001/file-000.parquet"]
    assert all(p.exists() for p in begun)
    _assert_loads_with(root, [12, 15])
    resumed = LeRobotWriter(root, SPEC)
    assert resumed.limits == TINY and not any(p.exists() for p in begun)
    resumed.append(episode(2, 9))
    _assert_loads_with(root, [12, 15, 9])
    assert [r["data/chunk_index"] for r in _rows(root)] == [0, 0, 1]
