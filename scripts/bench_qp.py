"""QP controller speed: the tick (build + solve) inside a running control loop, beside a plain DLS
tick and a fresh OSQP setup, and the real-time factor of the loop with its breakdown.

Usage: python scripts/bench_qp.py [--seconds 2] [--envs 1 16 64] [--control-every 1]

Scene: the WidowX AI (8 DOFs) on a table, every link watched against the table (detection 0.15 m,
up to 10 rows per environment); the end effector tracks a circle (radius 0.1 m, 2 rad/s, pointing
down), one phase per environment, starting from rest at mid-range. Physics at 240 Hz; the
controller ticks every ``--control-every`` physics steps.

The QP tick is timed inside that loop per environment: build (task rows, joint box, collision rows
from the distance rows, assembly, the certified exact solution where one exists) + solve (that
solution, else the environment's warm OSQP workspace). PyBullet's queries are
not part of the tick; the loop's breakdown shows them. Beside it, on the same ticks: the same QPs
through a fresh OSQP setup each, and a plain damped-least-squares solve of the same task rows.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import osqp
import pybullet as pb
from scipy import sparse

from app.control.controllers import QPController, QPControllerConfig
from app.ik.diffik import diff_ik
from app.ik.tasks import FrameTask
from app.sim.collision import CollisionPairs
from app.sim.scene import BoxSpec, Scene

log = logging.getLogger("bench_qp")
URDF = Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf"
EE = "ee_gripper_link"
DT = 1.0 / 240.0


def timed(fn, sink: list):
    """fn wrapped to append its wall time [s] to sink."""
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        sink.append(time.perf_counter() - t0)
        return out
    return wrapper


def us(times, per: int = 1) -> str:
    t = np.asarray(times) / per * 1e6
    return f"median {np.median(t):7.1f} us   p95 {np.percentile(t, 95):7.1f} us" if len(t) else "n/a"


def table_scene(n_envs: int) -> tuple[Scene, object]:
    """The benchmark's scene: one WidowX AI on a table per environment. Returns (scene, robot)."""
    scene = Scene(dt=DT)
    robot = scene.add_robot(str(URDF))
    scene.add_box(BoxSpec("table", (0.8, 0.8, 0.04), (0.3, 0.0, -0.0205)))
    scene.build(n_envs=n_envs, env_spacing=(1.2, 1.2))
    return scene, robot


def run_loop(n_envs: int, seconds: float, every: int) -> tuple[float, dict, list]:
    """The control loop; returns (wall [s], timings per phase, the QPs and task rows of each tick)."""
    scene, robot = table_scene(n_envs)
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0), QPControllerConfig(dt=DT * every),
                        CollisionPairs(obstacles=("table",)))
    t, ticks = defaultdict(list), []
    ctrl.distance_rows = timed(ctrl.distance_rows, t["distance rows (PyBullet queries + Jacobians)"])
    robot.read_states = timed(robot.read_states, t["getJointStates"])
    robot.control_dofs_position = timed(robot.control_dofs_position, t["setJointMotorControlArray"])
    build, solve = timed(ctrl.build, t["build"]), timed(ctrl.solve, t["solve"])

    def build_and_keep(q, v, targets, rows):
        qps, err = build(q, v, targets, rows)
        task = ctrl.tasks[0]  # the one frame task of this scene
        err, J = task.compute_error_and_jacobian(q)
        ticks.append((qps, (J, task.gain * err), task.row_weights()))
        return qps, err
    ctrl.build, ctrl.solve = build_and_keep, solve
    scene.step = timed(scene.step, t["physics (stepSimulation)"])
    phase = np.random.default_rng(1).uniform(0, 2 * np.pi, n_envs)
    down = np.tile([0.0, 1.0, 0.0, 0.0], (n_envs, 1))
    t0 = time.perf_counter()
    for k in range(int(round(seconds / DT))):
        if k % every == 0:
            a = phase + k * DT * 2.0
            target = np.stack([0.35 + 0.1 * np.cos(a), 0.1 * np.sin(a), 0.15 + 0 * a], axis=1)
            ctrl.step(scene.t, target, down)
        scene.step()
    wall = time.perf_counter() - t0
    scene.close()
    return wall, t, ticks


def pybullet_floor(n_envs: int, seconds: float) -> float:
    """Real-time factor of the loop's PyBullet calls alone (read the joints, query the table distances,
    command the motors, step), without any controller math: what no controller can beat."""
    scene, robot = table_scene(n_envs)
    pairs = CollisionPairs(obstacles=("table",))
    q0 = robot.model.mid_config() + 0.3 * np.sin(np.arange(robot.n_dofs))
    t0 = time.perf_counter()
    for k in range(int(round(seconds / DT))):
        q, _ = robot.read_states()
        for env in range(n_envs):
            pb.getClosestPoints(robot.bodies[env].body_id, scene.box_ids["table"][env], pairs.detection_distance,
                                physicsClientId=scene.client)
        robot.control_dofs_position(robot.unbatch(np.broadcast_to(q0, q.shape)), position_gain=0.3)
        scene.step()
    wall = time.perf_counter() - t0
    scene.close()
    return seconds / wall


def report_tick(n_envs: int, t: dict, ticks: list) -> None:
    """Per-environment tick times from the loop, beside a fresh OSQP setup and plain DLS on the same ticks."""
    tick = np.array(t["build"]) + np.array(t["solve"])
    exact = np.array([qps.exact.mean() for qps, _, _ in ticks])
    log.info("QP tick per env, %2d envs (build + solve):   %s   (OSQP needed on %.0f %% of env-ticks)",
             n_envs, us(tick, n_envs), 100 * (1 - exact.mean()))
    log.info("  of which the batched build:                %s", us(t["build"], n_envs))
    log.info("  ticks where every env needed OSQP:          %s", us(tick[exact == 0], n_envs))
    fresh, dls = [], []
    for qps, (J, V), w in ticks[::max(1, len(ticks) // 100)]:
        for env in range(len(qps)):
            qp = qps[env]
            t0 = time.perf_counter()
            solver = osqp.OSQP()
            solver.setup(P=sparse.csc_matrix(np.triu(qp.P)), q=qp.c, A=sparse.csc_matrix(qp.A), l=qp.l, u=qp.u,
                         verbose=False, polishing=False, eps_abs=1e-6, eps_rel=1e-6)
            solver.solve(raise_error=False)
            fresh.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            diff_ik(J[env], V[env], weights=w)
            dls.append(time.perf_counter() - t0)
    log.info("  a fresh OSQP setup per QP instead:          %s (solve only)", us(fresh))
    log.info("  plain damped least squares instead:         %s (no limits, no collisions)", us(dls))


def report_loop(n_envs: int, seconds: float, every: int, wall: float, t: dict) -> None:
    ticks = int(round(seconds / DT))
    log.info("control loop, %2d envs, control at %3.0f Hz: %.2f s simulated in %.2f s wall: %.2fx real time "
             "(%.0f us per env and physics step)", n_envs, 1 / (DT * every), seconds, wall, seconds / wall,
             wall / ticks / n_envs * 1e6)
    for name, times in t.items():
        log.info("    %-46s %5.1f %% of wall", name, 100 * sum(times) / wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--control-every", type=int, default=1, help="physics steps per control tick")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)
    run_loop(1, 0.1, 1)  # load the compiled kernels
    for n_envs in args.envs:
        wall, t, ticks = run_loop(n_envs, args.seconds, args.control_every)
        if n_envs <= 16:
            report_tick(n_envs, t, ticks)
        report_loop(n_envs, args.seconds, args.control_every, wall, t)
        log.info("    PyBullet's calls alone, no controller math: %.2fx real time",
                 pybullet_floor(n_envs, args.seconds))


if __name__ == "__main__":
    main()
