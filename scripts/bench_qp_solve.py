"""The tick's QP solved by the compiled dual active-set method (what the controller runs; OSQP only where its answer
is not certified) against OSQP's public update()/solve() in a warm workspace (what it ran on every constrained tick
before), on the same QPs: those of the QP loop of scripts/bench_qp_collision.py (the WidowX AI circling beside a
block on a table, 16 environments, rows from the link spheres), recorded once, then solved interleaved, in one
sitting. Prints the medians [us per QP] over the QPs whose unconstrained minimiser leaves some row (the ones OSQP
solved before) and the largest difference of the two answers.

Usage: python -m scripts.bench_qp_solve [--seconds 2] [--repeats 5]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import numpy as np

from app.control.controllers import QPController, QPControllerConfig
from app.ik._qp_exact import exact_solution_one
from app.ik.limits import SphereRows
from app.ik.qp import QP, QPSolver
from app.ik.tasks import FrameTask
from scripts.bench_qp_collision import BOXES, DT, EE, scene_of

log = logging.getLogger("bench_qp_solve")


def recorded_qps(seconds: float, n_envs: int = 16) -> list[QP]:
    """The QPs of the sphere-row loop whose unconstrained minimiser violates a row."""
    scene, robot = scene_of(n_envs)
    config = QPControllerConfig(dt=DT, collision_model="spheres")
    spheres = SphereRows(robot.sphere_model(BOXES, ()), config.detection_distance, config.max_rows)
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0), config, None, spheres)
    kept, solve = [], ctrl.solve

    def recording(t, qps):
        for b in range(len(qps)):
            x_free = np.linalg.solve(qps.P[b], -qps.c[b])
            Ax = qps.A[b] @ x_free
            if np.any(Ax < qps.l[b] - 1e-9) or np.any(Ax > qps.u[b] + 1e-9):
                kept.append(QP(qps.P[b].copy(), qps.c[b].copy(), qps.A[b].copy(), qps.l[b].copy(), qps.u[b].copy()))
        return solve(t, qps)
    ctrl.solve = recording
    phase = np.random.default_rng(1).uniform(0, 2 * np.pi, n_envs)
    down = np.tile([0.0, 1.0, 0.0, 0.0], (n_envs, 1))
    for k in range(int(round(seconds / DT))):
        a = phase + k * DT * 2.0
        ctrl.step(scene.t, np.stack([0.35 + 0.1 * np.cos(a), 0.1 * np.sin(a), 0.12 + 0 * a], axis=1), down)
        scene.step()
    scene.close()
    return kept


def active_set_us(qps: list[QP], out: np.ndarray) -> float:
    t0 = time.perf_counter()
    for k, qp in enumerate(qps):
        exact_solution_one(qp.P, qp.c, qp.A, qp.l, qp.u, out[k])
    return 1e6 * (time.perf_counter() - t0) / len(qps)


def osqp_us(qps: list[QP], out: np.ndarray) -> float:
    solver = QPSolver(*qps[0].A.shape[::-1])
    t0 = time.perf_counter()
    for k, qp in enumerate(qps):
        out[k] = solver.solve(qp).qdot
    return 1e6 * (time.perf_counter() - t0) / len(qps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)
    qps = recorded_qps(args.seconds)
    x_as, x_osqp = np.zeros((len(qps), qps[0].c.shape[0])), np.zeros((len(qps), qps[0].c.shape[0]))
    times: dict[str, list[float]] = {"active set (compiled)": [], "OSQP update + solve (public API)": []}
    for _ in range(args.repeats):
        times["active set (compiled)"].append(active_set_us(qps, x_as))
        times["OSQP update + solve (public API)"].append(osqp_us(qps, x_osqp))
    log.info("%d QPs with a binding row, from %.1f s of 16 environments", len(qps), args.seconds)
    for name, values in times.items():
        log.info("%s: median %.1f us per QP (%s)", name, statistics.median(values),
                 ", ".join(f"{v:.1f}" for v in values))
    log.info("largest difference of the answers: %.2e rad/s", float(np.abs(x_as - x_osqp).max()))
    cost = lambda qp, x: 0.5 * x @ qp.P @ x + qp.c @ x  # noqa: E731
    over = lambda qp, x: max(float(np.max(qp.l - qp.A @ x)), float(np.max(qp.A @ x - qp.u)), 0.0)  # noqa: E731
    log.info("objective, active set minus OSQP: at most %.2e (negative: the active set's is lower); rows missed by "
             "at most %.2e (active set) and %.2e (OSQP)", max(cost(qp, a) - cost(qp, b) for qp, a, b in
                                                             zip(qps, x_as, x_osqp)),
             max(over(qp, a) for qp, a in zip(qps, x_as)), max(over(qp, b) for qp, b in zip(qps, x_osqp)))


if __name__ == "__main__":
    main()
