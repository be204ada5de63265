"""QP controller speed: one tick's build + solve, beside a plain DLS tick and a fresh OSQP setup,
and the real-time factor of the whole control loop (physics included, no rendering).

Usage: python scripts/bench_qp.py [--ticks 2000] [--seconds 2]

The tick: WidowX AI (8 DOFs), a 6-D frame task, joint limits (one box row per DOF) and 10
collision rows (synthetic normals and point Jacobians at the current configuration), built
for 1 or 16 environments in one batched call, then one warm OSQP solve per environment; times
are per environment. PyBullet's closest-point queries are not part of the tick (see the loop).
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
from app.ik.limits import CollisionLimit, DistanceRows, JointLimits
from app.ik.qp import QPSolver, build_qp_batch
from app.ik.tasks import FrameTask
from app.sim.collision import CollisionPairs
from app.sim.scene import BoxSpec, Scene

log = logging.getLogger("bench_qp")
URDF = Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf"
EE = "ee_gripper_link"
DT = 1.0 / 240.0


def collision_rows(model: RobotModel, q: np.ndarray, rng: np.random.Generator, n: int = 10) -> DistanceRows:
    """n synthetic rows: random normals at random points of the arm's links."""
    links = [model.link_names[2 + k % (model.n_links - 2)] for k in range(n)]
    J = np.array([model.get_jacobian(q, link, rng.normal(scale=0.02, size=3))[:3] for link in links])
    normal = rng.normal(size=(n, 3))
    return DistanceRows(rng.uniform(0.02, 0.1, n), normal / np.linalg.norm(normal, axis=1, keepdims=True), J,
                        np.zeros_like(J), tuple(links))


def percentiles(times: list[float]) -> str:
    t = np.array(times) * 1e6
    return f"median {np.median(t):7.1f} us   p95 {np.percentile(t, 95):7.1f} us"


def bench_tick(ticks: int, n_envs: int) -> None:
    """Per-environment QP tick as the controller runs it: task rows, joint box and collision rows for
    ``n_envs`` environments, one batched build, one warm solve per environment."""
    model = RobotModel.from_urdf(str(URDF))
    rng = np.random.default_rng(0)
    task = FrameTask(model, EE, gain=10.0)
    limits, coll = JointLimits(model, accel_max=40.0), CollisionLimit()
    solvers = [QPSolver(model.n_dofs, model.n_dofs + 10) for _ in range(n_envs)]
    qp_t, build_t, fresh_t, dls_t = [], [], [], []
    for i in range(ticks):
        q = rng.uniform(model.q_lower, model.q_upper, (n_envs, model.n_dofs))
        pos, quat = model.forward_kinematics(q + 0.05, [EE])
        rows = [collision_rows(model, q_env, rng) for q_env in q]
        task.set_target(pos[:, 0], quat[:, 0])
        t0 = time.perf_counter()
        _, J, V = task.velocity_rows(q)
        w = task.row_weights()
        box = limits.compute_inequalities(q, DT, np.zeros_like(q))
        G, lo, hi = np.zeros((n_envs, 10, model.n_dofs)), np.zeros((n_envs, 10)), np.zeros((n_envs, 10))
        for env, env_rows in enumerate(rows):
            ineq = coll.compute_inequalities(env_rows, DT)
            G[env], lo[env], hi[env] = ineq.G, ineq.lo, ineq.hi
        qps = build_qp_batch(J * w[:, None], V * w, box.lo, box.hi, rows=(G, lo, hi, np.full(n_envs, 10)),
                             posture=model.mid_config() - q, n_rows=model.n_dofs + 10)
        t1 = time.perf_counter()
        for env in range(n_envs):
            solvers[env].solve(qps[env])
        t2 = time.perf_counter()
        build_t.append((t1 - t0) / n_envs)
        qp_t.append((t2 - t0) / n_envs)
        if i < 200:  # a fresh OSQP workspace per tick, for comparison
            qp = qps[0]
            t3 = time.perf_counter()
            fresh = osqp.OSQP()
            fresh.setup(P=sparse.csc_matrix(np.triu(qp.P)), q=qp.c, A=sparse.csc_matrix(qp.A), l=qp.l, u=qp.u,
                        verbose=False, polishing=False, eps_abs=1e-6, eps_rel=1e-6)
            fresh.solve(raise_error=False)
            fresh_t.append(time.perf_counter() - t3 + (t1 - t0) / n_envs)
        t4 = time.perf_counter()
        for env in range(n_envs):
            diff_ik(J[env], V[env], weights=w)
        dls_t.append((time.perf_counter() - t4) / n_envs)
    log.info("QP tick per env, %2d envs (build + warm solve): %s", n_envs, percentiles(qp_t))
    log.info("  of which the batched build:               %s", percentiles(build_t))
    log.info("  with a fresh OSQP setup instead:          %s", percentiles(fresh_t))
    log.info("  plain damped-least-squares solve instead: %s", percentiles(dls_t))


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
    for n_envs in (1, 16):
        bench_tick(args.ticks // n_envs, n_envs)
    for n in (1, 16, 64):
        bench_loop(n, args.seconds)


if __name__ == "__main__":
    main()
