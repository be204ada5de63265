"""What one video frame costs to render: the main job's render scene (16 WidowX AI arms on their tables, 640x480),
the whole scene rendered every frame against the moving bodies over the boxes' backdrop (app/sim/backdrop.py),
interleaved, medians of --frames; and the whole frame as a render process makes it (overlay included).

Usage: python scripts/bench_render.py [--config configs/batched_ik.yaml] [--frames 100]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import numpy as np

from app.config.loader import load_run_config
from app.episode.execute import video_look
from app.episode.frame_render import SceneRenderer
from app.episode.frame_state import FrameState
from app.episode.motion_factory import run_motion
from app.episode.replica import headless
from app.sim.backdrop import render_backdrop, show_boxes
from app.sim.camera import Camera

log = logging.getLogger("bench_render")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/batched_ik.yaml")
    parser.add_argument("--frames", type=int, default=100)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run = headless(load_run_config(args.config))
    renderer = SceneRenderer(run)
    scene, robot = renderer.scene, renderer.robot
    targets = run_motion(run, robot.n_envs, robot=robot)
    spec = video_look(run, robot, targets, scene.env_origins)
    v = spec.view
    camera = Camera(scene.client, v.view, v.projection, v.width, v.height)
    rng = np.random.default_rng(0)
    q0 = np.asarray(robot.initial_qpos, dtype=float).reshape(robot.n_envs, -1)
    t0 = time.perf_counter()
    backdrop = render_backdrop(scene, v.view, v.projection, v.width, v.height)
    backdrop_s = time.perf_counter() - t0
    whole, layered = [], []
    for _ in range(args.frames):
        q = q0 + rng.normal(0.0, 0.1, q0.shape)
        robot.teleport(q, np.zeros_like(q), np.arange(robot.n_envs))
        for shown, times in ((True, whole), (False, layered)):
            show_boxes(scene, shown)
            t0 = time.perf_counter()
            camera.frame(None if shown else backdrop)
            times.append(time.perf_counter() - t0)
    states = [FrameState(0.04 * k, q0 + 0.05 * np.sin(k), targets(0.04 * k).pos, targets(0.04 * k).quat,
                         np.zeros(robot.n_envs, np.int8)) for k in range(args.frames)]
    renderer.render(spec, states[0])  # the backdrop, once
    t0 = time.perf_counter()
    for state in states:
        renderer.render(spec, state)
    per_frame = (time.perf_counter() - t0) / len(states)
    renderer.close()
    ms = lambda xs: 1e3 * statistics.median(xs)  # noqa: E731
    log.info("%s, %d envs, %dx%d, %d frames: getCameraImage of the whole scene %.1f ms, moving bodies over the "
             "backdrop %.1f ms (the backdrop itself, once: %.1f ms); a render process's whole frame (overlay "
             "included) %.1f ms", args.config, robot.n_envs, v.width, v.height, args.frames, ms(whole),
             ms(layered), 1e3 * backdrop_s, 1e3 * per_frame)


if __name__ == "__main__":
    main()
