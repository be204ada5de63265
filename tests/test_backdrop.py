"""A fixed camera's picture as the boxes' backdrop (rendered once, in a client of their own) with the moving
bodies laid over it by depth is TinyRenderer's picture of the whole scene, pixel for pixel, arms dipping
under the table included."""

import dataclasses

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.episode.execute import video_look
from app.episode.motion_factory import run_motion
from app.episode.replica import headless
from app.episode.scene_build import build_scene
from app.sim.backdrop import render_backdrop, show_boxes
from app.sim.camera import Camera
from tests.conftest import ROOT


def _scene(config: str, n_envs: int):
    run = load_run_config(ROOT / "configs" / config)
    run = headless(dataclasses.replace(run, n_envs=n_envs, video=dataclasses.replace(run.video, width=200,
                                                                                     height=150)))
    scene, robot = build_scene(run)
    view = video_look(run, robot, run_motion(run, robot.n_envs, robot=robot), scene.env_origins).view
    return scene, robot, Camera(scene.client, view.view, view.projection, view.width, view.height), view


@pytest.mark.parametrize("config", ["qp_obstacle.yaml", "pick_place.yaml", "batched_ik.yaml"])
def test_moving_bodies_over_the_backdrop_are_the_whole_scenes_picture(config):
    scene, robot, camera, view = _scene(config, 4)
    try:
        backdrop = render_backdrop(scene, view.view, view.projection, view.width, view.height)
        assert (backdrop.depth < 1.0).mean() > 0.2  # the boxes fill a good part of the picture
        rng = np.random.default_rng(3)
        lo, hi = robot.model.q_lower, robot.model.q_upper
        for _ in range(3):  # wide random configurations: links under the table top and behind the obstacle
            q = rng.uniform(lo, hi, (robot.n_envs, robot.n_dofs))
            robot.teleport(q, np.zeros_like(q), np.arange(robot.n_envs))
            show_boxes(scene, True)
            whole = camera.frame()
            show_boxes(scene, False)
            moving = camera.frame()
            assert np.any(moving != whole, axis=-1).mean() > 0.2  # the boxes are gone from this client's pictures
            np.testing.assert_array_equal(camera.frame(backdrop), whole)
    finally:
        scene.close()


def test_boxes_shown_again_look_as_before_they_were_hidden():
    scene, _, camera, _ = _scene("qp_obstacle.yaml", 1)
    try:
        before = camera.frame()
        show_boxes(scene, False)
        show_boxes(scene, True)
        np.testing.assert_array_equal(camera.frame(), before)
    finally:
        scene.close()


def test_a_replicas_cameras_with_backdrops_give_the_whole_scenes_pixels_and_depths():
    """A recording's cameras (app.sim.cameras.SceneCameras with backdrops): a fixed and a wrist camera, both with
    depth, at wide random configurations (the gripper under the tabletop in some), equal a plain SceneCameras of
    the same replica pixel for pixel and depth for depth; the boxes come back for the wrist camera between."""
    from app.episode.replica import PosedReplica
    from app.kinematics.rotations import matrix_to_quat
    from app.sim.cameras import SceneCameras
    from app.specs import CameraStream

    wrist = matrix_to_quat(np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]))
    streams = [CameraStream("cam_high", eye=(-0.15, 0.0, 0.75), target=(0.35, 0.0, 0.0), width=96, height=72,
                            depth=True),
               CameraStream("cam_wrist", link="ee_gripper_link", offset_pos=(-0.08, 0.0, 0.05),
                            offset_quat=tuple(wrist), width=64, height=48, depth=True)]
    replica = PosedReplica(load_run_config(ROOT / "configs" / "pick_place.yaml"), n_envs=1)
    try:
        fast = SceneCameras(replica.scene, replica.robot, streams, backdrops=True)
        plain = SceneCameras(replica.scene, replica.robot, streams)
        lo, hi = replica.robot.model.q_lower, replica.robot.model.q_upper
        for q in np.random.default_rng(5).uniform(lo, hi, (4, 1, len(lo))):
            q = replica.pose(q, None)[0]
            depth_fast, depth_plain = {}, {}
            images_fast = fast.render(fast.poses(q), 0, None, depth_fast)
            images_plain = plain.render(plain.poses(q), 0, None, depth_plain)
            for name in ("cam_high", "cam_wrist"):
                np.testing.assert_array_equal(images_fast[name], images_plain[name])
                np.testing.assert_array_equal(depth_fast[name], depth_plain[name])
        assert np.isfinite(depth_fast["cam_high"]).mean() > 0.3  # the tabletop fills much of the high camera
    finally:
        replica.close()
