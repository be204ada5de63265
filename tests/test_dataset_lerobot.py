"""LeRobot v3.0: our reader on a dataset lerobot 0.4.4 wrote, and our writer's files against it key by key."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from app.dataset import EpisodeFrames, LeRobotWriter, episode_frames, load_dataset
from app.dataset.video_segments import frame_times
from tests.conftest import REFERENCE
from tests.dataset_helpers import CAM, SPEC

FIXTURE = REFERENCE / "lerobot_v30_tiny"
EPISODES = "meta/episodes/chunk-000/file-000.parquet"
DATA = "data/chunk-000/file-000.parquet"


@pytest.fixture(scope="module")
def fixture_dir():
    if not (FIXTURE / "meta" / "info.json").is_file():
        pytest.skip(f"lerobot-written fixture absent: {FIXTURE} (needs ../shared beside the checkout)")
    return FIXTURE


@pytest.fixture(scope="module")
def fed(fixture_dir):
    """The fixture's own episodes (state, action, decoded frames) as our writer's input."""
    ds = load_dataset(fixture_dir)
    return [EpisodeFrames(e.task, e.state, e.action, {CAM: episode_frames(ds, e.index, CAM)}) for e in ds.episodes]


@pytest.fixture(scope="module")
def ours(tmp_path_factory, fed):
    """Our writer's dataset of the fixture's episodes."""
    root = tmp_path_factory.mktemp("ours") / "ds"
    writer = LeRobotWriter(root, SPEC)
    for frames in fed:
        writer.append(frames)
    return root


def test_reader_loads_the_lerobot_written_fixture(fixture_dir):
    """2 episodes of 20 frames at 30 fps, state k = k, timestamps k/30, 20 decoded frames per episode."""
    ds = load_dataset(fixture_dir)
    assert (ds.format, ds.fps, ds.robot_type, ds.cameras) == ("lerobot-v3.0", 30.0, "trossen_ai_solo", (CAM,))
    assert ds.state_names == tuple(f"main_joint_{i}" for i in range(7))
    assert [e.index for e in ds.episodes] == [0, 1] and [e.task for e in ds.episodes] == ["pick", "pick"]
    for e in ds.episodes:
        np.testing.assert_array_equal(e.state, np.tile(np.arange(20.0)[:, None], 7))
        np.testing.assert_allclose(e.timestamp, np.arange(20) / 30, atol=1e-6)
        assert episode_frames(ds, e.index, CAM).shape == (20, 48, 64, 3)
    assert ds.episodes[1].videos[CAM].from_s == pytest.approx(20 / 30)


def test_writer_info_json_equals_lerobots_but_for_the_codec(fixture_dir, ours):
    """Every key of info.json (features, templates, totals, sizes, splits) as lerobot wrote it; codec h264."""
    theirs = json.loads((fixture_dir / "meta/info.json").read_text())
    mine = json.loads((ours / "meta/info.json").read_text())
    assert theirs["features"][CAM]["info"].pop("video.codec") == "av1"
    assert mine["features"][CAM]["info"].pop("video.codec") == "h264"
    assert list(mine) == list(theirs) and list(mine["features"]) == list(theirs["features"])
    for key in theirs:
        assert mine[key] == theirs[key], key


@pytest.mark.parametrize("path", [DATA, EPISODES, "meta/tasks.parquet"])
def test_writer_parquet_schemas_equal_lerobots(fixture_dir, ours, path):
    """Column names, order and arrow types of each parquet file; lerobot's huggingface/pandas metadata keys."""
    theirs, mine = pq.read_schema(fixture_dir / path), pq.read_schema(ours / path)
    assert [(f.name, str(f.type)) for f in mine] == [(f.name, str(f.type)) for f in theirs]
    for key in (theirs.metadata or {}):
        got, want = json.loads(mine.metadata[key]), json.loads(theirs.metadata[key])
        if key == b"huggingface":
            assert got["info"] == want["info"]
        else:
            assert got["index_columns"] == want["index_columns"]


def test_writer_rows_and_episode_metadata_equal_lerobots(fixture_dir, ours):
    """Same frames in: data rows equal; episode rows equal (indices, video spans); stats equal (quantiles to
    lerobot's histogram bin; image std is not compared: lerobot 0.4.4 wrote 0 for frames that vary)."""
    assert pq.read_table(ours / DATA).select(["observation.state", "timestamp", "frame_index", "episode_index",
                                              "index", "task_index"]).to_pylist() == pq.read_table(
        fixture_dir / DATA).select(["observation.state", "timestamp", "frame_index", "episode_index", "index",
                                    "task_index"]).to_pylist()
    theirs, mine = pq.read_table(fixture_dir / EPISODES).to_pylist(), pq.read_table(ours / EPISODES).to_pylist()
    for t, m in zip(theirs, mine, strict=True):
        for key, want in t.items():
            got = np.asarray(m[key]) if key.startswith("stats/") else m[key]
            if key.startswith(f"stats/{CAM}/") and not key.endswith(("count", "/min", "/max", "/mean")):
                assert got.shape == np.shape(want), key
            elif key.startswith("stats/") and key.rsplit("/", 1)[1].startswith("q"):
                feature = key.rsplit("/", 1)[0]
                span = max(np.max(t[feature + "/max"]) - np.min(t[feature + "/min"]), 1.0)
                np.testing.assert_allclose(got, want, atol=span / 1000, err_msg=key)
            elif key.startswith(f"stats/{CAM}/"):
                np.testing.assert_allclose(got, want, atol=6 / 255, err_msg=key)  # the fixture's frames via AV1
            elif key.startswith("stats/"):
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=key)
            else:
                assert got == want, key


def test_every_video_frame_sits_at_its_timestamp_within_lerobots_tolerance(ours, fed):
    """Frame k of the joined camera file is at k/fps [s] (lerobot matches frames within 1e-4 s), and each
    episode's span decodes to the frames written for it."""
    times = frame_times(ours / "videos" / CAM / "chunk-000/file-000.mp4")
    np.testing.assert_allclose(times, np.arange(40) / 30, atol=1e-4)
    ds = load_dataset(ours)
    for e in ds.episodes:
        got = episode_frames(ds, e.index, CAM).astype(float)
        np.testing.assert_allclose(got, fed[e.index].images[CAM], atol=3)
