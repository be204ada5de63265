"""QP controller speed: one tick's build + solve, beside a plain DLS tick and a fresh OSQP setup,
and the real-time factor of the whole control loop (physics included, no rendering).

Usage: python scripts/bench_qp.py [--ticks 2000] [--seconds 2]

The tick: WidowX AI (8 DOFs), a 6-D frame task, joint limits (one box row per DOF) and 10
collision rows (synthetic normals and point Jacobians at the current configuration).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import osqp
from scipy import sparse

from app import RobotModel
from app.control.controllers import QPController, QPControllerConfig
from app.ik.diffik import diff_ik
from app.ik.limits import CollisionLimit, DistanceRow, JointLimits
from app.ik.qp import QPSolver, build_qp
from app.ik.tasks import FrameTask
from app.sim.collision import CollisionPairs
from app.sim.scene import BoxSpec, Scene

log = logging.getLogger("bench_qp")
URDF = Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf"
EE = "ee_gripper_link"
DT = 1.0 / 240.0


def collision_rows(model: RobotModel, q: np.ndarray, rng: np.random.Generator, n: int = 10) -> list[DistanceRow]:
    rows = []
    for k in range(n):
        link = model.link_names[2 + k % (model.n_links - 2)]
        J = model.get_jacobian(q, link, rng.normal(scale=0.02, size=3))[:3]
        normal = rng.normal(size=3)
        rows.append(DistanceRow(rng.uniform(0.02, 0.1), normal / np.linalg.norm(normal), J, np.zeros_like(J), link))
    return rows


def percentiles(times: list[float]) -> str:
    t = np.array(times) * 1e6
    return f"median {np.median(t):7.1f} us   p95 {np.percentile(t, 95):7.1f} us"


def bench_tick(ticks: int) -> None:
    model = RobotModel.from_urdf(str(URDF))
    rng = np.random.default_rng(0)
    task = FrameTask(model, EE, gain=10.0)
    limits, coll = JointLimits(model, accel_max=40.0), CollisionLimit()
    qs = rng.uniform(model.q_lower, model.q_upper, (ticks, model.n_dofs))
    pos, quat = model.forward_kinematics(qs + 0.05, [EE])
    task.set_target(pos[:, 0], quat[:, 0])
    terms = task.terms(qs)
    rows = [collision_rows(model, q, rng) for q in qs[:50]]
    solver = QPSolver(model.n_dofs, model.n_dofs + 10)
    build_t, qp_t, fresh_t, dls_t = [], [], [], []
    for i, q in enumerate(qs):
        t0 = time.perf_counter()
        box = limits.compute_inequalities(q, DT, np.zeros(model.n_dofs))
        qp = build_qp([terms[i]], model.n_dofs, box=box, limits=[coll.compute_inequalities(rows[i % 50], DT)],
                      posture=model.mid_config() - q, n_rows=model.n_dofs + 10)
        t1 = time.perf_counter()
        solver.solve(qp)
        t2 = time.perf_counter()
        build_t.append(t1 - t0)
        qp_t.append(t2 - t0)
        if i < 300:  # a fresh workspace per tick, for comparison
            t3 = time.perf_counter()
            fresh = osqp.OSQP()
            fresh.setup(P=sparse.csc_matrix(np.triu(qp.P)), q=qp.c, A=sparse.csc_matrix(qp.A), l=qp.l, u=qp.u,
                        verbose=False, polishing=False, eps_abs=1e-6, eps_rel=1e-6)
            fresh.solve(raise_error=False)
            fresh_t.append(time.perf_counter() - t3)
        t4 = time.perf_counter()
        diff_ik(terms[i].J, terms[i].V, weights=terms[i].weights)
        dls_t.append(time.perf_counter() - t4)
    log.info("QP tick, warm workspace (build + solve): %s", percentiles(qp_t))
    log.info("  of which build:                        %s", percentiles(build_t))
    log.info("QP tick, fresh OSQP setup per tick:      %s", percentiles(fresh_t))
    log.info("plain damped-least-squares tick:         %s", percentiles(dls_t))


def bench_loop(n_envs: int, seconds: float) -> None:
    scene = Scene(dt=DT)
    robot = scene.add_robot(str(URDF))
    scene.add_box(BoxSpec("table", (0.8, 0.8, 0.04), (0.3, 0.0, -0.0205)))
    scene.build(n_envs=n_envs, env_spacing=(1.2, 1.2))
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0), QPControllerConfig(dt=DT),
                        CollisionPairs(obstacles=("table",)))
    phase = np.random.default_rng(1).uniform(0, 2 * np.pi, n_envs)
    steps = int(seconds / DT)
    t0 = time.perf_counter()
    for k in range(steps):
        a = phase + k * DT * 2.0
        target = scene.env_origins + np.stack([0.35 + 0.1 * np.cos(a), 0.1 * np.sin(a), 0.15 + 0 * a], axis=1)
        ctrl.step(scene.t, target, np.tile([0.0, 1.0, 0.0, 0.0], (n_envs, 1)))
        scene.step()
    wall = time.perf_counter() - t0
    log.info("control loop, %3d envs: %.2f s simulated in %.2f s wall: %.2fx real time (%.0f us per env-tick)",
             n_envs, seconds, wall, seconds / wall, wall / steps / n_envs * 1e6)
    scene.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ticks", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)
    bench_tick(args.ticks)
    for n in (1, 16, 64):
        bench_loop(n, args.seconds)


if __name__ == "__main__":
    main()
