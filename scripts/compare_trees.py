"""Two checkouts of this project benchmarked in one sitting, interleaved (A B A B ...), medians side by side.

Usage: python scripts/compare_trees.py OLD_TREE NEW_TREE [--pairs 5]

Runs scripts/bench_ik.py --n 300, scripts/bench_qp.py --seconds 1 --envs 1 16, scripts/bench_kinematics.py and
the main job (wall time) in each tree with PYTHONPATH set to that tree (otherwise the scripts import whichever
copy is installed). One warm-up round first: numba compiles each tree's kernels once.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import time

IK_ROWS = (("one call", "ours, one call each"), ("batch 1024", "ours, batches of 1024"),
           ("prepared", "ours, prepared PoseIK"))


def _run(cmd: str, tree: str) -> tuple[str, float]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=tree, shell=True, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=tree))
    return out.stdout + out.stderr, time.perf_counter() - t0


def measure(tree: str) -> dict[str, float]:
    """One round of every benchmark in ``tree``: figure name -> value."""
    m, robot = {}, None
    for line in _run("python scripts/bench_ik.py --n 300", tree)[0].splitlines():
        head = re.match(r"(\w+) \(\d+ DOFs", line)
        robot = head.group(1) if head else robot
        for key, label in IK_ROWS:
            if line.strip().startswith(label):
                m[f"ik {robot} {key} median ms"] = float(line.split()[-2])
    for line in _run("python scripts/bench_qp.py --seconds 1 --envs 1 16", tree)[0].splitlines():
        if tick := re.search(r"QP tick per env, +(\d+) envs .*?median +([\d.]+) us", line):
            m[f"qp tick {tick.group(1)} envs median us"] = float(tick.group(2))
        if loop := re.search(r"control loop, +(\d+) envs.*: ([\d.]+)x real time", line):
            m[f"qp loop {loop.group(1)} envs x real time"] = float(loop.group(2))
    for line in _run("python scripts/bench_kinematics.py", tree)[0].splitlines():
        if row := re.match(r"(\d+)\s+([\d.]+)\s+([\d.]+)", line.strip()):
            m[f"fk+jac batch {row.group(1)} us/cfg"] = float(row.group(2))
    m["main job wall s"] = _run(f"python -m app.run configs/batched_ik.yaml --out /tmp/compare_{os.getpid()}",
                                tree)[1]
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old"), parser.add_argument("new")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    trees = {"old": args.old, "new": args.new}
    for tree in trees.values():
        measure(tree)  # warm-up
    rows: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.pairs):
        for name, tree in trees.items():
            rows[name].append(measure(tree))
    for key in rows["new"][0]:
        old = statistics.median(r[key] for r in rows["old"] if key in r)
        new = statistics.median(r[key] for r in rows["new"] if key in r)
        print(f"{key:40s} old {old:10.4g}  new {new:10.4g}  new/old {new / old:6.3f}")


if __name__ == "__main__":
    main()
