"""What the video costs the main job: ``python -m app.run configs/batched_ik.yaml`` with and without
``--no-video``, wall time of the whole command, medians of --repeats, interleaved; with --trees, the same
for other checkouts of the project in the same sitting (before/after a change). Beside the wall times: the
report's wait for the video after the simulation (the render pipeline's own lag).

Usage: python scripts/bench_video_overhead.py [--repeats 5] [--config configs/batched_ik.yaml] [--trees DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(tree: Path, config: str, video: bool, out: Path) -> tuple[float, float, float]:
    """(wall [s], the report's video_after_sim [s], wall outside the report's total [s]: start-up and exit)."""
    cmd = [sys.executable, "-m", "app.run", config, "--out", str(out)] + ([] if video else ["--no-video"])
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"failed in {tree}: {' '.join(cmd)}\n{res.stderr[-2000:]}")
    timings = json.loads((out / "report.json").read_text())["timings_s"]
    return wall, timings.get("video_after_sim", 0.0), wall - timings["total"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--config", default="configs/batched_ik.yaml")
    parser.add_argument("--trees", nargs="*", type=Path, default=[])
    args = parser.parse_args()
    trees = [*args.trees, ROOT]
    times = {(t, v): [] for t in trees for v in (True, False)}
    with tempfile.TemporaryDirectory() as tmp:
        for tree in trees:  # compiles or loads the kernels once, outside the figures
            timed(tree, args.config, True, Path(tmp) / "warm")
        for _ in range(args.repeats):
            for tree in trees:
                for video in (True, False):
                    times[(tree, video)].append(timed(tree, args.config, video, Path(tmp) / "out"))
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min)")
    for tree in trees:
        (wall_v, wait_v, _), (wall_n, _, outside) = (
            [statistics.median(x[k] for x in times[(tree, v)]) for k in range(3)] for v in (True, False))
        print(f"{tree}: wall video {wall_v:.2f} s, --no-video {wall_n:.2f} s, the video adds {wall_v - wall_n:+.2f} s; "
              f"wait for the video after the simulation {wait_v:.2f} s; --no-video's start-up and exit (wall minus the "
              f"report's total) {outside:.2f} s\n"
              f"  walls: video {', '.join(f'{x[0]:.2f}' for x in times[(tree, True)])}; "
              f"no video {', '.join(f'{x[0]:.2f}' for x in times[(tree, False)])}")


if __name__ == "__main__":
    main()
