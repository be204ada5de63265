"""Speed of the sphere collision model and of collision-free pose IK.

Usage: python scripts/bench_collision.py [--repeats 7] [--queries 4096]

1. Distances + Jacobians of every checked pair of the Stationary AI (16 DOFs: self, arm-arm, its tabletop
   and frame) for 1,024 random configurations: median over repeats (exact, and with a 5 cm cutoff).
2. Collision-free pose IK on the WidowX AI with a table and three boxes, min_distance 1 cm: full 6-D
   targets (FK of random configurations whose clearance is >= min_distance), queries/s and success rate;
   then the same targets with rot_mask z-only (no goal).
Report the machine load (uptime) beside the figures.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import numpy as np

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision.pairs import sample_configs
from app.ik.collision_free import collision_free_ik

log = logging.getLogger("bench_collision")
ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"
STATIONARY = REFERENCE / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
WIDOWX = ROOT / "assets" / "urdf" / "widowx_ai.urdf"
EE = "ee_gripper_link"
MIN_D = 0.01
WORLD = World(boxes=(WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205)),
                     WorldBox("box_a", (0.03, 0.03, 0.05), (0.35, 0.15, 0.05)),
                     WorldBox("box_b", (0.04, 0.02, 0.08), (0.25, -0.2, 0.08)),
                     WorldBox("box_c", (0.05, 0.05, 0.03), (0.45, -0.05, 0.03))))


def median_time(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def bench_distances(repeats: int) -> None:
    if not STATIONARY.is_file():
        log.info("Stationary AI reference not found at %s: distances benchmark skipped", STATIONARY)
        return
    model = RobotModel.from_urdf(str(STATIONARY))
    cm = collision_model(model, package_dirs=[str(REFERENCE)])
    q = sample_configs(model, 1024, seed=1)
    exact = median_time(lambda: cm.distances(q), repeats)
    cut = median_time(lambda: cm.distances(q, cutoff=0.05), repeats)
    log.info("Stationary AI, %d pairs, 1,024 configurations, distances + Jacobians: median %.1f ms exact, %.1f ms "
             "with a 5 cm cutoff", cm.n_pairs, 1e3 * exact, 1e3 * cut)


def targets(model, cm, n: int, seed: int):
    q = sample_configs(model, 30 * n, seed)
    d, _ = cm.distances(q, with_gradient=False, cutoff=MIN_D)
    q = q[d.min(axis=1) >= MIN_D][:n]
    pos, quat = model.forward_kinematics(q, [EE])
    return pos[:, 0], quat[:, 0]


def targets_clear_of_world(model, cm, n: int, seed: int, clearance: float = 0.015):
    """#40's set: FK of random configurations ``clearance`` [m] from the world and free of self-contact."""
    q = sample_configs(model, 30 * n, seed)
    d, _ = cm.distances(q, with_gradient=False)
    world = np.array(cm.pair_kinds) == "world"
    q = q[(d[:, world].min(axis=1) >= clearance) & (d[:, ~world].min(axis=1) > 0)][:n]
    pos, quat = model.forward_kinematics(q, [EE])
    return pos[:, 0], quat[:, 0]


def bench_margins(queries: int, repeats: int) -> None:
    """Targets with a solution 1.5 cm clear of the world, min_distance 1 cm: the world's margin alone (the arm's own
    links only kept from contact) against the same margin on every pair (the arm's wrist pairs too)."""
    model = RobotModel.from_urdf(str(WIDOWX))
    cm = collision_model(model, WORLD)
    pos, quat = targets_clear_of_world(model, cm, queries, seed=4)
    for name, kw in (("world margin, self contact-free", {}), ("one margin on every pair", {"self_min_distance": MIN_D})):
        res = collision_free_ik(model, cm, EE, pos, quat, MIN_D, **kw)
        t = median_time(lambda: collision_free_ik(model, cm, EE, pos, quat, MIN_D, **kw), repeats)
        log.info("WidowX AI, %d targets clear of the world by 15 mm, min_distance %.0f mm, %s: %.0f queries/s, "
                 "collision-free %.2f %%", len(pos), 1e3 * MIN_D, name, len(pos) / t, 100 * res.collision_free.mean())


def bench_ik(queries: int, repeats: int) -> None:
    model = RobotModel.from_urdf(str(WIDOWX))
    cm = collision_model(model, WORLD)
    pos, quat = targets(model, cm, queries, seed=3)
    for name, kw in (("full 6-D", {}), ("rot_mask z-only", {"rot_mask": [False, False, True]})):
        res = collision_free_ik(model, cm, EE, pos, quat, MIN_D, **kw)
        t = median_time(lambda: collision_free_ik(model, cm, EE, pos, quat, MIN_D, **kw), repeats)
        log.info("WidowX AI + table + 3 boxes, %s targets, min_distance %.0f mm: %d queries in %.3f s = %.0f "
                 "queries/s, collision-free %.2f %%", name, 1e3 * MIN_D, len(pos), t, len(pos) / t,
                 100 * res.collision_free.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--queries", type=int, default=4096)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app.ik.solver").setLevel(logging.ERROR)
    log.info("load: %s", os.getloadavg())
    bench_distances(args.repeats)
    bench_ik(args.queries, args.repeats)
    bench_margins(args.queries, args.repeats)


if __name__ == "__main__":
    main()
