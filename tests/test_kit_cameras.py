"""app.record records the Trossen kit's cameras by default (#38 item 1): cam_high, cam_low and a wrist camera per
WidowX AI arm at 640x480 and 30 fps where the config names none, the wrist camera where the official follower
description puts its D405's colour optical frame, and ``--camera-size`` records them smaller."""

import json

import numpy as np
import pytest

from app.config.kit_cameras import WRIST_OFFSET_POS, WRIST_OFFSET_QUAT, kit_cameras, recording_cameras
from app.config.loader import load_run_config
from app.dataset import load_dataset
from app.kinematics.model import KinematicModel
from app.kinematics.rotations import quat_to_matrix
from app.record import main as record
from tests.conftest import REFERENCE, ROOT, require_reference


def test_a_scene_without_cameras_gets_the_kits_three_at_their_size_and_rate():
    run = load_run_config(str(ROOT / "configs/pick_place.yaml"))
    cameras = kit_cameras(run.scene_config)
    assert [c.name for c in cameras] == ["cam_high", "cam_low", "cam_wrist"]
    assert all((c.width, c.height, c.fps) == (640, 480, 30.0) for c in cameras)
    assert cameras[2].link == "ee_gripper_link"
    high, low = cameras[0], cameras[1]
    assert high.eye[2] > 0.9 and abs(low.eye[2] - 0.06) < 1e-9  # above the tabletop / just over it
    assert high.eye[0] > 0.65 and low.eye[0] > 0.65  # across the table from the arm, facing it
    assert recording_cameras(run, "none").scene_config.cameras == ()
    assert recording_cameras(run, "config").scene_config.cameras == ()


def test_a_two_arm_rig_gets_a_wrist_camera_on_each_arm_and_a_scene_with_cameras_keeps_its_own():
    rig = load_run_config(str(ROOT / "configs/bimanual_ik.yaml"))
    names = [(c.name, c.link) for c in recording_cameras(rig, "kit").scene_config.cameras]
    assert names[2:] == [("cam_left_wrist", "left/ee_gripper_link"), ("cam_right_wrist", "right/ee_gripper_link")]
    own = load_run_config(str(ROOT / "configs/pick_place_cameras.yaml"))
    assert recording_cameras(own, "kit").scene_config.cameras == own.scene_config.cameras


def test_the_wrist_camera_is_the_official_followers_colour_optical_frame():
    """From ee_gripper_link, wxai_follower.urdf's camera_color_optical_frame: within 0.1 mm and 0.01 deg."""
    require_reference()
    model = KinematicModel.from_urdf(str(REFERENCE / "trossen_arm_description/urdf/wxai_follower.urdf"))
    q = np.array([0.3, 0.8, 0.6, -0.4, 0.5, 1.1, 0.01, 0.01])[:model.n_dofs]
    pos, quat = model.forward_kinematics(q, ["ee_gripper_link", "camera_color_optical_frame"])
    R_ee, R_cam = quat_to_matrix(quat[0]), quat_to_matrix(quat[1])
    offset = R_ee.T @ (pos[1] - pos[0])
    turn = R_ee.T @ R_cam
    assert np.abs(offset - WRIST_OFFSET_POS).max() < 1e-4
    angle = np.degrees(np.arccos(np.clip((np.trace(quat_to_matrix(np.array(WRIST_OFFSET_QUAT)).T @ turn) - 1) / 2,
                                         -1, 1)))
    assert angle < 0.01


def test_a_default_recording_has_the_kits_cameras_at_the_size_asked(tmp_path):
    """No --cameras: the kit's three, rendered at --camera-size; meta/cameras.json's intrinsics at that size."""
    out = tmp_path / "ds"
    assert record([str(ROOT / "configs/single_ik.yaml"), "--episodes", "1", "--duration", "0.3", "--camera-size",
                   "32x24", "--out", str(out), "--keep-failed"]) == 0
    dataset = load_dataset(out)
    assert dataset.cameras == tuple(f"observation.images.{c}" for c in ("cam_high", "cam_low", "cam_wrist"))
    info = json.loads((out / "meta/info.json").read_text())
    assert info["features"]["observation.images.cam_wrist"]["shape"] == [24, 32, 3]
    meta = json.loads((out / "meta/cameras.json").read_text())
    assert (meta["cam_wrist"]["width"], meta["cam_wrist"]["height"]) == (32, 24)
    assert meta["cam_wrist"]["mount"]["type"] == "link" and meta["cam_high"]["K"][0][2] == 16.0


@pytest.mark.parametrize("size", ["320", "33x24", "axb", "8x8"])
def test_a_bad_camera_size_is_a_one_line_error(tmp_path, capsys, size):
    assert record([str(ROOT / "configs/single_ik.yaml"), "--episodes", "1", "--camera-size", size,
                   "--out", str(tmp_path / "ds")]) == 2
    assert "--camera-size" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_depth_camera_records_millimetres_along_its_axis_beside_the_dataset(tmp_path):
    """A camera 0.5 m above the tabletop looking straight down, ``depth: true``: every pixel of every frame
    500 mm (+-1, rounding), as uint16 in depth/top/episode_000000.npz; meta/cameras.json says so; the kit's
    cameras with --depth each write their own."""
    import yaml

    top = -0.0205 + 0.02  # scenes/table.yaml's tabletop [m]
    run = yaml.safe_load((ROOT / "configs/single_ik.yaml").read_text())
    run.update(scene=str(ROOT / "scenes/table.yaml"), scene_overrides={"cameras": [
        {"name": "top", "eye": [0.55, 0.28, top + 0.5], "target": [0.55, 0.28, top], "up": [1, 0, 0], "fov": 10,
         "width": 32, "height": 24, "depth": True}]})
    config = tmp_path / "top.yaml"
    config.write_text(yaml.safe_dump(run))
    out = tmp_path / "ds"
    assert record([str(config), "--episodes", "1", "--duration", "0.3", "--keep-failed", "--out", str(out)]) == 0
    depth = np.load(out / "depth/top/episode_000000.npz")["depth_mm"]
    assert depth.dtype == np.uint16 and depth.shape == (len(load_dataset(out).episodes[0].state), 24, 32)
    assert np.abs(depth.astype(int) - 500).max() <= 1
    meta = json.loads((out / "meta/cameras.json").read_text())["top"]["depth"]
    assert meta["unit"] == "mm" and meta["path"] == "depth/top/episode_{episode_index:06d}.npz"
    kit = tmp_path / "kit"
    assert record([str(ROOT / "configs/single_ik.yaml"), "--episodes", "1", "--duration", "0.3", "--camera-size",
                   "32x24", "--depth", "--keep-failed", "--out", str(kit)]) == 0
    assert sorted(p.parent.name for p in (kit / "depth").glob("*/episode_000000.npz")) == [
        "cam_high", "cam_low", "cam_wrist"]
