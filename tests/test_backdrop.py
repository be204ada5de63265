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
