"""Soak of two arms pressing towards each other (configs/bimanual_qp.yaml): the closest distance between any link of
one arm and any link of the other (and the table), as PyBullet measures it every control tick, against the
promise d_safe - 0.1 mm, over a long run.

Usage: python scripts/soak_arms.py [--duration 60] [--gamma G] [--n-envs N]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from app.config.loader import load_run_config
from app.runner import execute

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("soak_arms")


def soak(duration: float, gamma: float | None, n_envs: int | None) -> dict:
    """The run's invariants (its report's) for bimanual_qp.yaml over ``duration`` [s]."""
    sets = {} if gamma is None else {"controller.gamma": gamma}
    run = load_run_config(ROOT / "configs" / "bimanual_qp.yaml", sets, duration=duration, n_envs=n_envs)
    with tempfile.TemporaryDirectory() as out:
        execute(run, Path(out), video=False)
        return json.loads((Path(out) / "report.json").read_text())["invariants"]


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--gamma", type=float, default=None)
    p.add_argument("--n-envs", type=int, default=None)
    a = p.parse_args(argv)
    inv = soak(a.duration, a.gamma, a.n_envs)
    d, promise = inv["min_obstacle_distance_m"], inv["obstacle_promise_m"]
    log.info("closest arm-arm or arm-table distance over %.0f s: %.2f mm (promise >= %.2f mm): %s", a.duration,
             1e3 * d, 1e3 * promise, "kept" if d >= promise else "BROKEN")
    return 0 if d >= promise else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
