"""Scale-out benchmark: 1 against N Ray workers in one sitting (medians of --repeats, interleaved).

Usage: python scripts/bench_scale.py [--workers 2] [--repeats 3] [--solve-targets 200000] [--parts qp,sweep,solve]
                                    [--quick] [--qp-duration 6] [--trees DIR ...]

With --trees, the same for other checkouts of the project, interleaved run by run (before/after a change).

- The QP run of configs/qp_obstacle.yaml with 64 environments for 6 s (--qp-duration), no video: wall time of the whole
  command; the simulation phase (one process: the control loop's timings; sharded: from the first block
  to the last, Ray's start, the workers' imports and scene builds included, since this process works on
  blocks meanwhile); the start-up (until every process simulates) on its own; and the simulation's pace
  once every process simulates (environments' episodes per second, from the blocks' spans), against one
  process's.
- A 64-seed sweep of configs/single_ik.yaml (no video): wall time.
- app.solve on WidowX AI targets (random configurations within the limits, FK): targets per second.
- The data a lock-step design would move per control tick and environment (for a cluster).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], tree: Path = ROOT) -> float:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, *cmd], cwd=tree, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{res.stderr[-2000:]}")
    return time.perf_counter() - t0


def qp_run(workers: int, out: Path, duration: float, n_envs: int, tree: Path = ROOT) -> dict[str, float]:
    """The 64-environment QP run: wall [s]; simulation [s] (one process: the control loop; sharded: first block
    to last, start-up included); the pace while every process simulated [environments' episodes / s]."""
    wall = timed(["-m", "app.run", "configs/qp_obstacle.yaml", "--no-video", "--n-envs", str(n_envs), "--duration",
                  str(duration), "--workers", str(workers), "--out", str(out)], tree)
    report = json.loads((out / "report.json").read_text())
    t = report["timings_s"]
    if workers == 1:
        sim = t["control"] + t["physics"] + t["record"]
        return {"wall": wall, "sim": sim, "pace": n_envs / sim, "startup": 0.0}
    s = report["scale"]
    pace = s["all_working_env_episodes"] / s["all_working_s"] if s["all_working_s"] else float("nan")
    return {"wall": wall, "sim": t["blocks"], "pace": pace, "startup": t["blocks"] - s["all_working_s"],
            "ray": t["ray_start"]}


def per_tick_bytes(n_envs: int = 64) -> dict[str, float]:
    """Bytes per environment and control tick: a lock-step design's state up, command down, telemetry row."""
    from app.control.status import EnvStatus
    from app.episode.frame_state import FrameState

    q = np.zeros((n_envs, 8))
    up = len(pickle.dumps((q, q)))  # joint positions and velocities
    down = len(pickle.dumps((q, q)))  # motor targets and feed-forward velocities
    row = len(pickle.dumps([np.zeros(n_envs)] * 7))  # t, pos/rot error, ok, scale, active, distance, stalled
    frame = len(pickle.dumps(FrameState(0.0, q, np.zeros((n_envs, 1, 3)), np.zeros((n_envs, 1, 4)),
                                        np.full(n_envs, EnvStatus.REACHED, np.int8))))
    return {"state_up_B": up / n_envs, "command_down_B": down / n_envs, "telemetry_B": row / n_envs,
            "video_frame_state_B": frame / n_envs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--solve-targets", type=int, default=200_000)
    parser.add_argument("--parts", default="qp,sweep,solve", help="which benchmarks, comma-separated")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the script")
    parser.add_argument("--qp-duration", type=float, default=6.0, help="the QP run's simulated seconds (#39: 18)")
    parser.add_argument("--trees", nargs="*", type=Path, default=[], help="other checkouts, measured alike")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if not parts <= {"qp", "sweep", "solve"}:
        parser.error(f"--parts takes qp, sweep and solve, comma-separated; got {args.parts!r}")
    n_envs, duration, seeds = (8, 0.5, "0:8") if args.quick else (64, args.qp_duration, "0:64")
    tmp = Path(tempfile.mkdtemp(prefix="bench_scale_"))
    trees = [*args.trees, ROOT]
    rows: dict[tuple, list[float]] = {}
    for r in range(args.repeats):
        for t, tree in enumerate(trees):
            for w in (1, args.workers):
                if "qp" in parts:
                    for key, value in qp_run(w, tmp / f"qp{t}_{w}_{r}", duration, n_envs, tree).items():
                        rows.setdefault((tree, f"qp {key} w{w}"), []).append(value)
                if "sweep" in parts:
                    rows.setdefault((tree, f"sweep wall w{w}"), []).append(timed(
                        ["-m", "app.sweep", "configs/single_ik.yaml", "--seeds", seeds, "--workers", str(w),
                         "--out", str(tmp / f"sweep{t}_{w}_{r}")], tree))
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min)")
    for tree in trees:
        print(f"== {tree}")
        med = {k: statistics.median(v) for (t, k), v in rows.items() if t == tree}
        if "qp" in parts:
            _print_qp(med, args.workers, n_envs, duration, args.repeats)
            walls = lambda w: ", ".join(f"{x:.2f}" for x in rows[(tree, f"qp wall w{w}")])  # noqa: E731
            print(f"  walls         1 worker {walls(1)}; {args.workers} workers {walls(args.workers)}")
        if "sweep" in parts:
            w = args.workers
            print(f"sweep of single_ik, seeds {seeds}: 1 worker {med['sweep wall w1']:.2f} s, {w} workers "
                  f"{med[f'sweep wall w{w}']:.2f} s: {med['sweep wall w1'] / med[f'sweep wall w{w}']:.2f}x")
        if "solve" in parts:
            _bench_solve(tmp, 20_000 if args.quick else args.solve_targets, args.workers, tree)
    print("per environment and control tick (pickled):", {k: round(v, 1) for k, v in per_tick_bytes(n_envs).items()})


def _print_qp(med: dict[str, float], w: int, n_envs: int, duration: float, repeats: int) -> None:
    one, many = (lambda k: med[f"qp {k} w1"]), (lambda k: med[f"qp {k} w{w}"])
    print(f"QP run, {n_envs} envs, {duration} s, no video (median of {repeats}):")
    print(f"  wall          1 worker {one('wall'):.2f} s, {w} workers {many('wall'):.2f} s: "
          f"{one('wall') / many('wall'):.2f}x")
    print(f"  simulation    1 worker {one('sim'):.2f} s, {w} workers {many('sim'):.2f} s from the first block to "
          f"the last: {one('sim') / many('sim'):.2f}x")
    print(f"  start-up      until every process simulated: {many('startup'):.2f} s (Ray's start {many('ray'):.2f} s; "
          "this process simulates meanwhile)")
    print(f"  pace          1 worker {one('pace'):.2f}, {w} workers {many('pace'):.2f} environments' episodes/s "
          f"while all simulate: {many('pace') / one('pace'):.2f}x")


def _bench_solve(tmp: Path, n: int, workers: int, tree: Path = ROOT) -> None:
    from app import RobotModel

    model = RobotModel.from_urdf(str(ROOT / "assets" / "urdf" / "widowx_ai.urdf"))
    q = np.random.default_rng(0).uniform(model.q_lower, model.q_upper, (n, model.n_dofs))
    pos, quat = model.forward_kinematics(q, ["ee_gripper_link"])
    np.savez(tmp / "targets.npz", pos=pos[:, 0], quat=quat[:, 0])
    for w in (1, workers):
        wall = timed(["-m", "app.solve", str(tmp / "targets.npz"), "--workers", str(w), "--out",
                      str(tmp / f"q{w}.npz")], tree)
        ok = np.load(tmp / f"q{w}.npz")["converged"].mean()
        print(f"app.solve {n} WidowX targets, {w} worker(s): {wall:.2f} s wall, {n / wall:,.0f} targets/s "
              f"(converged {100 * ok:.2f} %)")


if __name__ == "__main__":
    main()
