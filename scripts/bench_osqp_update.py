"""OSQP workspace update + solve: osqp's compiled workspace (``OSQP._solver``, what app.ik.qp uses) against the
public ``OSQP.update``/``solve``, on the same QPs (the size of a WidowX QP tick: 8 variables, 18 rows), in one
sitting, interleaved. Prints the median per call [us] of each.

Usage: python -m scripts.bench_osqp_update [--calls 3000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from app.ik.qp import QP, QPSolver


def problems(n: int, n_x: int = 8, n_rows: int = 18, seed: int = 0) -> list[QP]:
    """Strictly convex QPs with a feasible box and dense constraint rows."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        M = rng.normal(size=(n_x, n_x))
        A = rng.normal(size=(n_rows, n_x))
        out.append(QP(M @ M.T + np.eye(n_x), rng.normal(size=n_x), A, -1.0 - rng.random(n_rows), 1.0 + rng.random(n_rows)))
    return out


def per_call_us(solver: QPSolver, qps: list[QP]) -> float:
    t0 = time.perf_counter()
    for qp in qps:
        solver.solve(qp)
    return 1e6 * (time.perf_counter() - t0) / len(qps)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    qps = problems(args.calls)
    direct, public = QPSolver(8, 18), QPSolver(8, 18)
    public._ext = None  # the public path: OSQP.update + OSQP.solve
    assert direct._ext is not None, "osqp's compiled workspace is not reachable in this osqp version"
    times = {"compiled workspace": [], "public update+solve": []}
    for _ in range(args.repeats):
        times["compiled workspace"].append(per_call_us(direct, qps))
        times["public update+solve"].append(per_call_us(public, qps))
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.1f} us per call ({', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
