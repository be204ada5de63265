"""Named cameras (app.sim.cameras): a point lands on the pixel the recorded intrinsics and extrinsics predict in
PyBullet's own rendering, and a camera on a link sits where PyBullet puts that link."""

import dataclasses

import numpy as np
import pybullet as pb
import pytest
import yaml

from app.config.loader import load_run_config
from app.episode.scene_build import build_scene
from app.errors import ConfigError
from app.kinematics.rotations import quat_to_matrix, xyzw_to_wxyz
from app.sim.cameras import CameraStream, SceneCameras, intrinsics
from app.sim.scene import BoxSpec, Scene
from tests.conftest import ROOT, WIDOWX_URDF, require_reference

MARKERS = {"red": ((0.32, 0.08, 0.05), (1.0, 0.0, 0.0, 1.0)), "blue": ((0.18, -0.12, 0.12), (0.0, 0.0, 1.0, 1.0))}


def _centroid(image: np.ndarray, channel: int) -> np.ndarray:
    """(u, v) [px] of the pixels dominated by ``channel`` (the marker's colour)."""
    img = image.astype(int)
    others = [c for c in range(3) if c != channel]
    mask = (img[..., channel] > 120) & (img[..., others[0]] < 60) & (img[..., others[1]] < 60)
    assert mask.sum() > 10
    v, u = np.nonzero(mask)
    return np.array([u.mean() + 0.5, v.mean() + 0.5])


@pytest.mark.parametrize("size", [(640, 480), (320, 240), (424, 240)])
def test_markers_land_on_the_pixels_the_intrinsics_and_extrinsics_predict(size):
    """Two small coloured cubes seen by a fixed camera: PyBullet's picture puts each where K [R|t] projects its
    centre (within 1.5 px), for several sizes and aspect ratios."""
    scene = Scene()
    try:
        robot = scene.add_robot(str(WIDOWX_URDF))
        for name, (pos, rgba) in MARKERS.items():
            scene.add_box(BoxSpec(name, (0.012, 0.012, 0.012), pos, rgba=rgba, collision=False))
        scene.build()
        cam = CameraStream("cam_high", width=size[0], height=size[1], fps=30.0, fov=50.0, eye=(0.25, -0.7, 0.55),
                           target=(0.25, 0.0, 0.05))
        cams = SceneCameras(scene, robot, [cam])
        poses = cams.poses(np.zeros(8))
        image = cams.render(poses)["cam_high"]
        assert image.shape == (size[1], size[0], 3)
        p, R = poses["cam_high"]
        K = intrinsics(cam)
        for channel, (pos, _) in zip((0, 2), MARKERS.values()):
            x = R.T @ (np.asarray(pos) - p)
            uv = (K @ (x / x[2]))[:2]
            np.testing.assert_allclose(_centroid(image, channel), uv, atol=1.5)
    finally:
        scene.close()


def test_a_camera_on_a_link_sits_where_pybullet_puts_the_link_and_moves_with_the_arm():
    """The Stationary AI's left wrist camera (follower_left_camera_color_optical_frame): its pose equals PyBullet's
    link frame before and after the left arm moves, and its picture changes with it."""
    require_reference()
    run = load_run_config(ROOT / "configs/bimanual_ik.yaml", n_envs=1, scene="scenes/stationary_ai.yaml")
    scene, robot = build_scene(run)
    try:
        link = "follower_left_camera_color_optical_frame"
        cams = SceneCameras(scene, robot, [CameraStream("cam_left_wrist", link=link, width=320, height=240, fps=30.0, fov=58.0)])
        body = robot.bodies[0]
        pictures = []
        for dq in (0.0, 0.4):
            q = robot.read_states()[0][0].copy()
            q[0] += dq
            robot.set_qpos(q)
            p, R = cams.poses(q)["cam_left_wrist"]
            state = pb.getLinkState(body.body_id, body.link_index[link], computeForwardKinematics=True,
                                    physicsClientId=scene.client)
            np.testing.assert_allclose(p, state[4], atol=1e-6)
            np.testing.assert_allclose(R, quat_to_matrix(xyzw_to_wxyz(np.array(state[5]))), atol=1e-6)
            pictures.append(cams.render(cams.poses(q))["cam_left_wrist"])
        assert np.abs(pictures[0].astype(int) - pictures[1]).mean() > 5.0
    finally:
        scene.close()


@pytest.mark.parametrize("camera, key", [
    ({"name": "cam_high", "link": "no_such_link"}, "cameras[0].link"),
    ({"name": "cam_high", "width": 641}, "cameras[0].width"),
    ({"name": "cam high"}, "cameras[0].name"),
    ({"name": "cam_high", "eye": [0, 0, 1], "target": [0, 0, 0]}, "cameras[0].up"),
])
def test_bad_cameras_are_config_errors_naming_the_key(tmp_path, camera, key):
    """An unknown link, an odd width, a name that cannot be a dataset key, up along the line of sight."""
    path = tmp_path / "run.yaml"
    run = {"scene": str(ROOT / "scenes/table.yaml"), "scene_overrides": {"cameras": [camera]}}
    path.write_text(yaml.safe_dump(run))
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
        load_run_config(path)


@pytest.mark.parametrize("R", [np.diag([1.0, -1.0, -1.0]), quat_to_matrix(np.array([0.3, -0.5, 0.7, 0.2]))],
                         ids=["straight_down", "tilted_and_rolled"])
def test_a_videos_view_of_an_optical_frame_is_the_named_cameras_view_matrix(R):
    """app.episode.video_job.optical_view (the mp4's camera on a link) maps the world as app.sim.cameras.view_matrix
    (the datasets' camera) does, for a camera looking straight down and for a rolled one."""
    from app.episode.frame_render import optical_view
    from app.sim.cameras import view_matrix

    p = np.array([0.2, -0.1, 0.5])
    np.testing.assert_allclose(optical_view(p, R, 58.0, 64, 48).view, view_matrix(p, R), atol=1e-12)


def test_the_video_films_from_a_wrist_camera_following_its_link():
    """video.camera naming a link camera: the mp4's frames are that camera's pictures (the datasets' renderer at the
    same pose), and they change as the arm moves."""
    require_reference()
    from app.episode.execute import video_look
    from app.episode.frame_render import SceneRenderer
    from app.episode.frame_state import FrameState
    from app.episode.replica import headless
    from app.episode.video_job import named_stream

    run = load_run_config(ROOT / "configs/bimanual_ik.yaml", {"video.camera": "cam_left_wrist", "video.width": 320,
                                                              "video.height": 240}, n_envs=1,
                          scene="scenes/stationary_ai.yaml")
    scene, robot = build_scene(run)
    renderer = SceneRenderer(headless(run))
    try:
        stream = named_stream(run)
        cams = SceneCameras(scene, robot, [dataclasses.replace(stream, width=320, height=240)])
        q0 = robot.read_states()[0][0].copy()
        spec = video_look(run, robot, None, np.zeros((1, 3)))  # what app.run films with
        assert spec.link_camera == stream and np.allclose(spec.view.eye, cams.poses(q0)[stream.name][0])
        frames = []
        for dq in (0.0, 0.5):
            q = q0.copy()
            q[0] += dq
            far = np.full((1, 1, 3), -50.0)  # the targets' axes behind the camera: the picture alone
            state = FrameState(0.0, q[None], far, np.tile([1.0, 0, 0, 0], (1, 1, 1)), np.zeros(1, int))
            frames.append(renderer.render(spec, state).astype(int))
            robot.set_qpos(q)
            truth = cams.render(cams.poses(q))[stream.name].astype(int)
            lower = slice(120, 240)  # below the caption
            assert np.abs(frames[-1][lower] - truth[lower]).mean() < 2.0
        assert np.abs(frames[0] - frames[1]).mean() > 5.0
    finally:
        renderer.close()
        scene.close()
