"""app.track speed: a clean 10,000-waypoint trajectory (one waypoint per 500 Hz tick, 20 s, the gripper pointing
down on a Lissajous figure) tracked on ideal joints, as a multiple of real time; medians of --repeats in one
sitting, per controller: ``ik`` (configs/single_ik.yaml), ``qp`` without obstacles, ``qp`` with the table's
collision rows (PyBullet's closest points each tick, or the link spheres: ``qp+table/spheres``). The loop
(``loop``: the targets' conversion, the ticks, the diagnosis) and the whole command (``total``: file reading,
start IK, writing). Report with the machine load (`uptime`).

    python -m scripts.bench_track [--waypoints 10000] [--rate 500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from app.dataset.trajectory import write_table
from app.episode.trajectory_run import run_track
from app.track import parse_args

DOWN = (np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0)
CONFIGS = {
    "ik": "configs/single_ik.yaml",
    "qp": "scene: {root}/scenes/table.yaml\nscene_overrides: {{table: null}}\ncontroller: {{type: qp}}\n",
    "qp+table": "scene: {root}/scenes/table.yaml\ncontroller: {{type: qp}}\n",
    "qp+table/spheres": "scene: {root}/scenes/table.yaml\ncontroller: {{type: qp, collision_model: spheres}}\n",
}


def trajectory(path: Path, n: int, rate: float) -> Path:
    t = np.arange(n) / rate
    w = 2 * np.pi / 10.0
    pos = np.stack([0.3 + 0.04 * np.sin(w * t), 0.06 * np.sin(2 * w * t), 0.1 + 0.02 * np.sin(3 * w * t)], axis=1)
    cols = {"t": t, "x": pos[:, 0], "y": pos[:, 1], "z": pos[:, 2]}
    cols.update({k: np.full(n, v) for k, v in zip(("qw", "qx", "qy", "qz"), DOWN)})
    return write_table(path, cols)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--waypoints", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        traj = trajectory(Path(tmp) / "traj.npz", args.waypoints, args.rate)
        configs = {}
        for name, text in CONFIGS.items():
            if text.endswith(".yaml"):
                configs[name] = str(root / text)
            else:
                configs[name] = str(Path(tmp) / f"{name.replace('+', '_').replace('/', '_')}.yaml")
                Path(configs[name]).write_text(text.format(root=root))
        times = {name: ([], [], []) for name in configs}
        for _ in range(args.repeats):  # interleaved
            for name, config in configs.items():
                argv = [str(traj), "--config", config, "--out", str(Path(tmp) / "out"), "--rate", str(args.rate)]
                start = time.perf_counter()
                report = run_track(parse_args(argv))
                times[name][0].append(report["timings"]["loop_s"])
                times[name][1].append(time.perf_counter() - start)
                times[name][2].append(report["timings"]["loop_cpu_s"])
                assert report["stretches"] == [], report["stretch_lines"]
        duration = args.waypoints / args.rate
        for name, (loop, total, cpu) in times.items():
            lm, tm, cm = statistics.median(loop), statistics.median(total), statistics.median(cpu)
            print(f"{name:16s} {args.waypoints} waypoints, {duration:g} s at {args.rate:g} Hz: loop {lm:.2f} s "
                  f"({duration / lm:.1f}x real time, {lm / args.waypoints * 1e6:.0f} us/tick), total {tm:.2f} s "
                  f"({duration / tm:.1f}x); loop CPU {cm:.2f} s ({duration / cm:.1f}x)")


if __name__ == "__main__":
    main()
