"""app.record with the scene's named cameras: videos per camera in the dataset, intrinsics and extrinsics recorded
beside it (checked against PyBullet's link frames), each camera at its own rate."""

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from app import RobotModel
from app.config.loader import load_run_config
from app.dataset import episode_frames, load_dataset
from app.dataset.video_segments import read_frames
from app.episode.frame_state import FrameState
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix
from app.record import main
from app.recording.episode_cameras import EpisodeCameras
from app.sim.cameras import intrinsics
from app.sim.urdf_loader import load_urdf
from tests.conftest import ROOT, WIDOWX_URDF
from tests.pb_truth import link_frame, set_config

R_EE_CAM = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # optical z along the approach axis x
CAMERAS = [
    {"name": "cam_high", "eye": [-0.1, 0.0, 0.7], "target": [0.35, 0.0, 0.0], "width": 96, "height": 64, "fps": 30},
    {"name": "cam_wrist", "link": "ee_gripper_link", "offset_pos": [-0.08, 0.0, 0.05],
     "offset_quat": matrix_to_quat(R_EE_CAM).tolist(), "width": 64, "height": 48, "fps": 10, "fov": 70},
]


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "cams.yaml"
    run = yaml.safe_load((ROOT / "configs/single_ik.yaml").read_text())
    run.update(scene=str(ROOT / "scenes/table.yaml"), duration=1.0, scene_overrides={"cameras": CAMERAS})
    path.write_text(yaml.safe_dump(run))
    return path


@pytest.fixture(scope="module")
def recorded(config, tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "ds"
    assert main([str(config), "--episodes", "2", "--out", str(out), "--keep-failed", "--duration", "1.0"]) == 0
    return out


def test_each_camera_is_a_video_feature_with_one_frame_per_row(recorded):
    """Both cameras are features of info.json at their own sizes; each episode's span holds one decoded frame per
    row of the episode."""
    info = json.loads((recorded / "meta/info.json").read_text())
    for cam in CAMERAS:
        feature = info["features"][f"observation.images.{cam['name']}"]
        assert feature["dtype"] == "video" and feature["shape"] == [cam["height"], cam["width"], 3]
    ds = load_dataset(recorded)
    for e in ds.episodes:
        for cam in CAMERAS:
            span = e.videos[f"observation.images.{cam['name']}"]
            first, last = round(span.from_s * ds.fps), round(span.to_s * ds.fps)
            frames = read_frames(Path(span.path), first, last - first)
            assert last - first == len(e.state) and frames.shape == (len(e.state), cam["height"], cam["width"], 3)


def test_intrinsics_and_link_camera_poses_are_recorded_and_match_pybullet(recorded, config, pb_client):
    """cameras.json's K is the pinhole of the fov and size; camera_poses.parquet gives the wrist camera at
    PyBullet's ee_gripper_link frame of the recorded state, offset as configured (1e-5 m, 1e-5)."""
    meta = json.loads((recorded / "meta/cameras.json").read_text())
    run = load_run_config(config)
    for stream in run.scene_config.cameras:
        np.testing.assert_allclose(meta[stream.name]["K"], intrinsics(stream), atol=1e-12)
    assert meta["cam_wrist"]["mount"]["link"] == "ee_gripper_link" and meta["cam_high"]["mount"]["type"] == "fixed"
    poses = pq.read_table(recorded / "meta/camera_poses.parquet").to_pydict()
    ds = load_dataset(recorded)
    widowx = RobotModel.from_urdf(str(WIDOWX_URDF))
    body = load_urdf(pb_client, str(WIDOWX_URDF))
    rows = list(zip(poses["episode_index"], poses["frame_index"], poses["cam_wrist.pos"], poses["cam_wrist.quat_wxyz"]))
    assert len(rows) == sum(len(e.state) for e in ds.episodes)
    for e_idx, k, pos, quat in rows[::7]:
        state = ds.episodes[e_idx].state[k]
        set_config(pb_client, body, widowx, np.concatenate([state, state[6:]]))
        p_l, R_l = link_frame(pb_client, body, "ee_gripper_link")
        np.testing.assert_allclose(pos, p_l + R_l @ [-0.08, 0.0, 0.05], atol=1e-5)
        np.testing.assert_allclose(quat_to_matrix(np.array(quat)), R_l @ R_EE_CAM, atol=1e-5)


def test_a_slower_camera_holds_its_latest_picture_between_its_frames(config):
    """The 10 Hz wrist camera in a 30 fps recording renders every third row and repeats it in the two after; the
    30 Hz camera renders every row (the arm moves, so its pictures change)."""
    run = load_run_config(config, n_envs=1)
    cams = EpisodeCameras(run)
    try:
        q0 = np.array(run.scene_config.robot.init_qpos)
        frames = [FrameState(k / 30, (q0 + [0.05 * k, 0, 0, 0, 0, 0.1 * k, 0, 0])[None], None, None, None)
                  for k in range(7)]
        images, _ = cams.render(frames, 0, 30.0)
    finally:
        cams.close()
    wrist, high = images["observation.images.cam_wrist"], images["observation.images.cam_high"]
    same = [np.array_equal(wrist[k], wrist[k - 1]) for k in range(1, 7)]
    assert same == [True, True, False, True, True, False]
    assert not any(np.array_equal(high[k], high[k - 1]) for k in range(1, 7))


@pytest.mark.slow  # the actors' start (~3 s on 2 cores)
def test_two_ray_workers_give_the_episodes_of_one_process_in_episode_order(recorded, config, tmp_path, shared_ray):
    """--workers 2 (every block on a Ray actor: APP_SCALE_LOCAL=0): the same states, in the same order, and each
    episode's camera frames (contact-free task: the blocks simulate what the whole run does)."""
    out = tmp_path / "w2"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("APP_SCALE_LOCAL", "0")
        assert main([str(config), "--episodes", "2", "--out", str(out), "--keep-failed", "--duration", "1.0",
                     "--workers", "2"]) == 0
    one, two = load_dataset(recorded), load_dataset(out)
    for a, b in zip(one.episodes, two.episodes, strict=True):
        np.testing.assert_allclose(a.state, b.state, atol=1e-6)
        for key, span in a.videos.items():
            first = round(span.from_s * one.fps)
            fa = read_frames(Path(span.path), first, len(a.state)).astype(int)
            other = b.videos[key]
            fb = read_frames(Path(other.path), round(other.from_s * two.fps), len(b.state)).astype(int)
            assert np.abs(fa - fb).mean() < 1.0


def test_an_act_block_sends_back_file_names_not_frames_and_its_files_hold_the_cameras_pictures(recorded, config,
                                                                                                tmp_path):
    """A block for --format act-hdf5 writes each episode whole (images deflate-compressed) where it runs: what
    travels back (the pickled Block) is a few kB, not the frames; the files' pictures are the dataset videos'
    (same renders; the mp4 is lossy)."""
    import pickle

    import h5py

    from app.recording.blocks import Sink, joint_names, record_block

    run = load_run_config(config, n_envs=2, duration=1.0)
    block = record_block((run, np.arange(2), Sink(tmp_path, "act-hdf5", "si", tuple(joint_names(run)))))
    assert all(e.images == {} for e in block.episodes) and len(pickle.dumps(block)) < 100_000
    videos = load_dataset(recorded)
    for file, episode in zip(block.files, videos.episodes, strict=True):
        with h5py.File(file) as f:
            images = f["/observations/images/cam_high"]
            assert images.compression == "gzip" and images.shape == (30, 64, 96, 3)
            span = episode.videos["observation.images.cam_high"]
            mp4 = read_frames(Path(span.path), round(span.from_s * videos.fps), 30).astype(int)
            assert np.abs(images[()].astype(int) - mp4).mean() < 3.0
            np.testing.assert_allclose(f["/observations/qpos"][()], episode.state, atol=1e-6)


@pytest.mark.slow  # the actors' start (~3 s on 2 cores)
def test_act_hdf5_on_two_ray_workers_equals_one_process_frame_for_frame(config, tmp_path, shared_ray):
    """--format act-hdf5 --workers 2 (every block on a Ray actor): the same files as one process, pictures equal to
    the bit (lossless compression), in episode order."""
    args = [str(config), "--episodes", "2", "--keep-failed", "--duration", "1.0", "--format", "act-hdf5"]
    assert main([*args, "--out", str(tmp_path / "w1")]) == 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("APP_SCALE_LOCAL", "0")
        assert main([*args, "--out", str(tmp_path / "w2"), "--workers", "2"]) == 0
    one, two = load_dataset(tmp_path / "w1"), load_dataset(tmp_path / "w2")
    assert sorted(p.name for p in (tmp_path / "w2").iterdir()) == ["episode_0.hdf5", "episode_1.hdf5", "meta"]
    for a, b in zip(one.episodes, two.episodes, strict=True):
        np.testing.assert_allclose(a.state, b.state, atol=1e-6)
        assert a.images.keys() == {"cam_high", "cam_wrist"}
        for cam in a.images:
            np.testing.assert_array_equal(a.images[cam], b.images[cam])


def test_a_tiny_video_file_limit_through_the_cli_gives_each_episode_its_own_video_files(config, recorded, tmp_path):
    """--video-file-mb 1e-6 --chunks-size 1: every camera's second episode starts chunk-001/file-000 (from 0 s) while
    the data stays in one file; the episodes' decoded frames are those of the one-file recording (H.264, 3 levels)."""
    out = tmp_path / "rolled"
    assert main([str(config), "--episodes", "2", "--out", str(out), "--keep-failed", "--duration", "1.0",
                 "--video-file-mb", "1e-6", "--chunks-size", "1"]) == 0
    rows = sorted((r for p in out.glob("meta/episodes/*/*.parquet") for r in pq.read_table(p).to_pylist()),
                  key=lambda r: r["episode_index"])
    assert len(list(out.glob("data/*/*.parquet"))) == 1
    rolled, plain = load_dataset(out), load_dataset(recorded)
    for cam in CAMERAS:
        key = f"videos/observation.images.{cam['name']}"
        assert [(r[f"{key}/chunk_index"], r[f"{key}/file_index"], r[f"{key}/from_timestamp"]) for r in rows] == [
            (0, 0, 0.0), (1, 0, 0.0)]
        for k in (0, 1):
            a = episode_frames(rolled, k, f"observation.images.{cam['name']}").astype(float)
            b = episode_frames(plain, k, f"observation.images.{cam['name']}").astype(float)
            assert a.shape == b.shape and np.abs(a - b).max() <= 3
