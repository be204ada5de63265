"""Write IK targets for ``python -m app.solve``: end-effector poses from FK of random in-limit configurations.

Usage: python scripts/make_targets.py [--urdf URDF] [--link LINK] [--n N] [--seed S] --out targets.npz

The file holds ``pos`` (n, 3) [m] and ``quat`` (n, 4) (w, x, y, z) in the robot's base frame; every target is
reachable (it is the pose of a configuration within the joint limits).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from app import RobotModel

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", default=str(ROOT / "assets" / "urdf" / "widowx_ai.urdf"))
    parser.add_argument("--link", default="ee_gripper_link")
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not 1 <= args.n <= 10_000_000:
        parser.error(f"--n must be 1..10,000,000 targets, got {args.n}")
    model = RobotModel.from_urdf(args.urdf)
    rng = np.random.default_rng(args.seed)
    q = rng.uniform(model.q_lower, model.q_upper, (args.n, model.n_dofs))
    pos, quat = model.forward_kinematics(q, [args.link])
    np.savez(args.out, pos=pos[:, 0], quat=quat[:, 0])
    print(f"wrote {args.n} targets of {args.link} to {args.out}")


if __name__ == "__main__":
    main()
