"""Soak of two arms pressing towards each other (configs/bimanual_qp.yaml): the closest distance between any link of
one arm and any link of the other (and the table), as PyBullet measures it every physics step, against the
promise d_safe - 0.1 mm, over a long run.

Usage: python scripts/soak_arms.py [--duration 60] [--gamma G] [--n-envs N] [--collision-model pybullet|spheres]

With ``pybullet`` rows the run's own report states PyBullet's distances; with ``spheres`` rows the controller
sees only the sphere distances, so PyBullet measures the same pairs (the referee) after every physics step.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.episode.execute import execute
from app.episode.loop import simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.sim.collision import distance_rows, referee_pairs

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("soak_arms")


def soak(duration: float, gamma: float | None, n_envs: int | None, collision_model: str = "pybullet") -> dict:
    """The run's invariants (its report's) for bimanual_qp.yaml over ``duration`` [s]; with sphere rows the
    obstacle distance is PyBullet's, measured every physics step."""
    sets = {"controller.collision_model": collision_model}
    if gamma is not None:
        sets["controller.gamma"] = gamma
    run = load_run_config(ROOT / "configs" / "bimanual_qp.yaml", sets, duration=duration, n_envs=n_envs)
    if collision_model == "pybullet":
        with tempfile.TemporaryDirectory() as out:
            execute(run, Path(out), video=False)
            return json.loads((Path(out) / "report.json").read_text())["invariants"]
    return refereed(run)


def refereed(run) -> dict:
    """min_obstacle_distance_m by PyBullet over the watched pairs of a sphere-row run, and the promise."""
    scene, robot = build_scene(run)
    worst = [np.inf]
    try:
        def referee(k, controller, q):
            if k == 0:
                worst.append(referee_pairs(controller.spheres.collision))
            rows = distance_rows(robot, worst[1], q, scene.box_ids)
            if len(rows):
                worst[0] = min(worst[0], float(rows.distance.min()))
        simulate(run, scene, robot, run_motion(run, robot.n_envs, robot=robot), on_tick=referee)
    finally:
        scene.close()
    return {"min_obstacle_distance_m": worst[0], "obstacle_promise_m": run.controller.d_safe - 1e-4}


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--gamma", type=float, default=None)
    p.add_argument("--n-envs", type=int, default=None)
    p.add_argument("--collision-model", choices=("pybullet", "spheres"), default="pybullet")
    a = p.parse_args(argv)
    inv = soak(a.duration, a.gamma, a.n_envs, a.collision_model)
    d, promise = inv["min_obstacle_distance_m"], inv["obstacle_promise_m"]
    log.info("closest arm-arm or arm-table distance over %.0f s (%s rows): %.2f mm (promise >= %.2f mm): %s",
             a.duration, a.collision_model, 1e3 * d, 1e3 * promise, "kept" if d >= promise else "BROKEN")
    return 0 if d >= promise else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
