"""The QP control loop with collision rows from PyBullet's closest points vs from the link spheres, physics
included, beside the floor: PyBullet's physics step, joint state reads and motor commands alone.

Usage: python scripts/bench_qp_collision.py [--seconds 2] [--envs 16] [--repeats 3]

Scene (as scripts/bench_qp.py, plus a block): the WidowX AI on a table with a block beside its circle, every
moving link watched against both (detection 0.15 m, up to 10 rows per environment, d_safe 1 cm); the end
effector circles (radius 0.1 m, 2 rad/s, pointing down), one phase per environment. Physics and control at
240 Hz. The three loops run interleaved, ``--repeats`` times each, in one sitting; medians are reported with
the share of wall time the rows took; besides the wall time, this process's CPU time (on a shared machine the
wall time counts the waits for a core as well).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

from app.control.controllers import QPController, QPControllerConfig
from app.ik.limits import SphereRows
from app.ik.tasks import FrameTask
from app.sim.collision import CollisionPairs
from app.sim.scene import BoxSpec, Scene

log = logging.getLogger("bench_qp_collision")
URDF = Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf"
EE = "ee_gripper_link"
DT = 1.0 / 240.0
BOXES = ("table", "block")


def scene_of(n_envs: int) -> tuple[Scene, object]:
    scene = Scene(dt=DT)
    robot = scene.add_robot(str(URDF))
    scene.add_box(BoxSpec("table", (0.8, 0.8, 0.04), (0.3, 0.0, -0.0205)))
    scene.add_box(BoxSpec("block", (0.08, 0.08, 0.16), (0.42, 0.16, 0.08)))
    scene.build(n_envs=n_envs, env_spacing=(1.2, 1.2))
    return scene, robot


def controller_loop(n_envs: int, seconds: float, mode: str) -> tuple[float, float, float, float]:
    """(real-time factor by wall time, by this process's CPU time, share of wall in the rows, smallest row
    distance [m]) of the QP loop."""
    scene, robot = scene_of(n_envs)
    config = QPControllerConfig(dt=DT, collision_model=mode)
    pairs, spheres = CollisionPairs(obstacles=BOXES), None
    if mode == "spheres":
        pairs, spheres = None, SphereRows(robot.sphere_model(BOXES, ()), config.detection_distance, config.max_rows)
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0), config, pairs, spheres)
    rows_time, dmin = [], np.inf
    inner = ctrl.distance_rows

    def timed_rows(q):
        nonlocal dmin
        t0 = time.perf_counter()
        rows = inner(q)
        rows_time.append(time.perf_counter() - t0)
        dmin = min(dmin, rows.distance.min()) if len(rows) else dmin
        return rows
    ctrl.distance_rows = timed_rows
    phase = np.random.default_rng(1).uniform(0, 2 * np.pi, n_envs)
    down = np.tile([0.0, 1.0, 0.0, 0.0], (n_envs, 1))
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(int(round(seconds / DT))):
        a = phase + k * DT * 2.0
        ctrl.step(scene.t, np.stack([0.35 + 0.1 * np.cos(a), 0.1 * np.sin(a), 0.12 + 0 * a], axis=1), down)
        scene.step()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    scene.close()
    return seconds / wall, seconds / cpu, sum(rows_time) / wall, dmin


def floor_loop(n_envs: int, seconds: float) -> tuple[float, float]:
    """Real-time factor (wall, CPU) of PyBullet's physics step, joint state reads and motor commands alone."""
    scene, robot = scene_of(n_envs)
    q0 = robot.model.mid_config() + 0.3 * np.sin(np.arange(robot.n_dofs))
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(int(round(seconds / DT))):
        q, _ = robot.read_states()
        robot.control_dofs_position(robot.unbatch(np.broadcast_to(q0, q.shape)), position_gain=0.3)
        scene.step()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    scene.close()
    return seconds / wall, seconds / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)
    for mode in ("pybullet", "spheres"):
        controller_loop(1, 0.1, mode)  # load the compiled kernels and the sphere cache
    got: dict[str, list] = {"pybullet": [], "spheres": [], "floor": []}
    for _ in range(args.repeats):
        for mode in ("pybullet", "spheres"):
            got[mode].append(controller_loop(args.envs, args.seconds, mode))
        got["floor"].append((*floor_loop(args.envs, args.seconds), 0.0, np.nan))
    med = {k: np.median(np.array(v), axis=0) for k, v in got.items()}
    for mode in ("pybullet", "spheres"):
        rtf, rtf_cpu, share, dmin = med[mode]
        log.info("QP loop, %d envs, rows from %-8s: %.2fx real time by wall, %.2fx by CPU time (medians of %d; rows "
                 "%.0f %% of wall; closest row %.1f mm)", args.envs, mode, rtf, rtf_cpu, args.repeats, 100 * share,
                 1e3 * dmin)
    log.info("spheres / pybullet: %.2fx by wall, %.2fx by CPU time", med["spheres"][0] / med["pybullet"][0],
             med["spheres"][1] / med["pybullet"][1])
    log.info("floor (physics step + state reads + motor commands): %.2fx real time by wall, %.2fx by CPU time",
             med["floor"][0], med["floor"][1])


if __name__ == "__main__":
    main()
