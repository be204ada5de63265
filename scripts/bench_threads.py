"""Where splitting a batched IK call over threads starts to pay (app.kernels.dispatch.MIN_CHUNK).

Usage: python scripts/bench_threads.py [--repeats 60]

Tracking-like problems (the start 0.02 rad from a reachable answer, as in a control loop) for the WidowX AI
(closed-form seeded) and the KUKA iiwa; per batch size, the median time of one call on the calling thread
alone against the split the library makes at that size (chunks of >= MIN_CHUNK problems, the first on the
calling thread). APP_THREADS sets the thread count (default: the CPUs).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pybullet_data

import app.kernels.dispatch as threads
from app import RobotModel

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = {"widowx": (ROOT / "assets" / "urdf" / "widowx_ai.urdf", "ee_gripper_link"),
          "kuka": (Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf", "lbr_iiwa_link_7")}


def median_ms(model, link, pos, quat, q0, chunk: int, repeats: int) -> float:
    threads.MIN_CHUNK = chunk
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        model.inverse_kinematics(link, pos=pos, quat=quat, init_qpos=q0)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times[5:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    library_chunk = threads.MIN_CHUNK
    print(f"threads: {threads.n_threads()}, MIN_CHUNK {library_chunk} (split from {2 * library_chunk} problems)")
    for name, (path, link) in ROBOTS.items():
        model = RobotModel.from_urdf(str(path))
        rng = np.random.default_rng(0)
        lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
        hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
        for batch in (8, 16, 32, 48, 64, 128, 256):
            q = rng.uniform(0.5 * lo, 0.5 * hi, (batch, model.n_dofs))
            pos, quat = model.forward_kinematics(q, [link])
            q0 = np.clip(q + rng.normal(0, 0.02, q.shape), model.q_lower, model.q_upper)
            one = median_ms(model, link, pos[:, 0], quat[:, 0], q0, 10 ** 9, args.repeats)
            split = median_ms(model, link, pos[:, 0], quat[:, 0], q0, 4, args.repeats)
            print(f"{name:7s} batch {batch:4d}: one thread {one:.3f} ms, split {split:.3f} ms, "
                  f"split/one {split / one:.2f}")
    threads.MIN_CHUNK = library_chunk


if __name__ == "__main__":
    main()
