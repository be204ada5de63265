"""Write an end-effector trajectory for ``python -m app.track``: a policy's output as it might look, a gripper
pointing down drawing a figure of eight in front of the WidowX AI, with a stretch that reaches out of the workspace.

Usage: python scripts/make_trajectory.py [--seconds S] [--hz HZ] [--radius R] [--reach-out] --out policy_out.csv

Columns: ``t`` [s], ``x y z`` [m] relative to the robot's base, ``qw qx qy qz`` and ``gripper`` (0 open .. 1
closed); with ``--reach-out`` the circle's far side leaves the arm's reach for a while, which ``app.track``
reports as an ``unreachable`` stretch.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

DOWN = (0.5 ** 0.5, 0.0, 0.5 ** 0.5, 0.0)  # (w, x, y, z): the gripper's approach axis (x) pointing down


def trajectory(seconds: float, hz: float, radius: float, reach_out: bool) -> np.ndarray:
    """Rows (n, 9): t, x, y, z, qw, qx, qy, qz, gripper."""
    t = np.arange(0.0, seconds + 1e-9, 1.0 / hz)
    angle = 2 * np.pi * t / seconds
    r = radius + (0.45 * np.clip(np.sin(angle), 0.0, None) ** 4 if reach_out else 0.0)
    x, y, z = 0.3 + r * np.sin(angle), 0.5 * radius * np.sin(2 * angle), np.full_like(t, 0.1)  # a figure of eight
    grip = (t > seconds / 2).astype(float)
    return np.column_stack([t, x, y, z, *np.tile(DOWN, (len(t), 1)).T, grip])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--hz", type=float, default=50.0)
    parser.add_argument("--radius", type=float, default=0.08)
    parser.add_argument("--reach-out", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not (0 < args.seconds <= 3600 and 1 <= args.hz <= 1000 and 0 <= args.radius <= 0.3):
        parser.error("--seconds must be in (0, 3600], --hz in [1, 1000], --radius in [0, 0.3] m")
    rows = trajectory(args.seconds, args.hz, args.radius, args.reach_out)
    with Path(args.out).open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["t", "x", "y", "z", "qw", "qx", "qy", "qz", "gripper"])
        writer.writerows([f"{v:.6g}" for v in row] for row in rows)
    print(f"wrote {len(rows)} waypoints ({args.seconds:g} s at {args.hz:g} Hz) to {args.out}")


if __name__ == "__main__":
    main()
