"""The sphere model against PyBullet's closest points over many random configurations.

Usage: python scripts/check_spheres.py [--robot widowx|stationary] [--n 10000] [--min-distance 0.01]

For every checked pair (self and, on the WidowX AI, a table and a block): no false clear (where PyBullet's
shapes are apart the sphere distance is never larger; where they penetrate the spheres do too), true -
sphere <= excess_a + excess_b (+ 1 mm for PyBullet's GJK), and no pair reported clear (>= min_distance) is
closer than min_distance - 1 mm by PyBullet's measure. Exit status 1 on a violation.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pybullet as pb

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision.pairs import sample_configs
from app.sim.urdf_loader import load_urdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.sphere_truth import add_box, true_distances  # noqa: E402

log = logging.getLogger("check_spheres")
REFERENCE = ROOT.parent / "shared" / "reference"
ROBOTS = {"widowx": (ROOT / "assets" / "urdf" / "widowx_ai.urdf", None),
          "stationary": (REFERENCE / "trossen_arm_description" / "urdf" / "stationary_ai.urdf", [str(REFERENCE)])}
WORLD = World(boxes=(WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205)),
                     WorldBox("block", (0.03, 0.05, 0.06), (0.3, 0.1, 0.06), (0.92, 0.0, 0.0, 0.39))))
PB_TOL = 1e-3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", choices=sorted(ROBOTS), default="widowx")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--min-distance", type=float, default=0.01)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path, dirs = ROBOTS[args.robot]
    model = RobotModel.from_urdf(str(path), package_dirs=dirs)
    world = WORLD if args.robot == "widowx" else World()
    cm = collision_model(model, world, package_dirs=dirs)
    client = pb.connect(pb.DIRECT)
    body = load_urdf(client, str(path), package_dirs=dirs)
    boxes = {b.name: add_box(client, b.half, b.pos, b.quat) for b in world.boxes}
    q = sample_configs(model, args.n, seed=2024)
    t = time.perf_counter()
    d, _ = cm.distances(q, with_gradient=False)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    true = np.array([true_distances(client, body, model, cm, qi, boxes) for qi in q])
    t_pb = time.perf_counter() - t
    apart = true >= 0
    false_clear = int(((d > true + 1e-9) & apart).sum() + ((d > 0) & ~apart).sum())
    over = float((true - d - cm.pair_excess)[apart].max())
    clear_but_close = int(((d >= args.min_distance) & (true < args.min_distance - 1e-3)).sum())
    log.info("%s: %d configurations x %d pairs (%d apart, %d penetrating by PyBullet); ours %.3f s, PyBullet %.1f s",
             args.robot, args.n, cm.n_pairs, apart.sum(), (~apart).sum(), t_ours, t_pb)
    log.info("false clears: %d; max(true - sphere - excess_a - excess_b) = %.2f mm (allowed %.1f); pairs reported "
             ">= %.3f m but closer than that - 1 mm by PyBullet: %d", false_clear, 1e3 * over, 1e3 * PB_TOL,
             args.min_distance, clear_but_close)
    log.info("excess per link [mm]: %s", {k: round(1e3 * v, 1) for k, v in cm.robot.excess.items()})
    return 1 if false_clear or over > PB_TOL or clear_but_close else 0


if __name__ == "__main__":
    sys.exit(main())
