"""Pick-and-place figures: success over seeds with each controller, the real-time factor of the shipped config
without video, and the time of one batched grasp-ranking IK call.

Usage: python scripts/bench_pick_place.py [--parts success,speed,rank] [--seeds 0:5] [--repeats 5]

- success: ``configs/pick_place.yaml`` (16 environments) for every seed and controller (ik, qp): placed n/16
  and the failures' reasons.
- speed: simulated seconds per wall second, of the control loop (control, physics and recording: the
  report's timings) and of the whole run (build, grasp ranking, report and plot included; no video), medians
  of ``--repeats`` runs.
- rank: 16 environments x 32 candidates x 3 poses (pre-grasp, grasp, lift) in one call of the prepared
  solver, and the full 5-pose call the task makes (24 candidates), medians of 50 calls.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.episode.execute import execute
from app.ik.prepared import PoseIK
from app.ik.robot_model import RobotModel
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import matrix_to_quat
from app.tasks.grasps import RANK_OPTIONS, GraspGeometry, candidates, grasp_poses, rank_grasps

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "pick_place.yaml"
log = logging.getLogger("bench_pick_place")


def success(seeds: range) -> None:
    for controller in ("ik", "qp"):
        placed, total = 0, 0
        for seed in seeds:
            run = load_run_config(CONFIG, sets={"controller.type": controller}, seed=seed)
            with tempfile.TemporaryDirectory() as out:
                s = execute(run, Path(out), video=False, show_progress=False).summary
            placed, total = placed + s["placed"], total + s["n_envs"]
            log.info("%s seed %d: placed %d/%d %s", controller, seed, s["placed"], s["n_envs"], s["failed"] or "")
        log.info("%s: placed %d/%d (%.1f %%) over seeds %s", controller, placed, total, 100 * placed / total,
                 f"{seeds.start}:{seeds.stop}")


def speed(repeats: int) -> None:
    for controller in ("ik", "qp"):
        factors, loops, splits = [], [], []
        for _ in range(repeats):
            run = load_run_config(CONFIG, sets={"controller.type": controller})
            with tempfile.TemporaryDirectory() as out:
                t0 = time.perf_counter()
                result = execute(run, Path(out), video=False, show_progress=False)
                wall = time.perf_counter() - t0
            factors.append(run.duration / wall)
            t = result.timings
            loops.append(run.duration / (t["control"] + t["physics"] + t["record"]))
            splits.append((result.timings["control"], result.timings["physics"], wall))
        c, p, w = (statistics.median(x) for x in zip(*splits))
        log.info("%s: control loop %.2fx real time, whole run %.2fx (medians of %d; %.1f s simulated: wall %.2f s, "
                 "control %.2f s, physics %.2f s)", controller, statistics.median(loops), statistics.median(factors),
                 repeats, run.duration, w, c, p)


def rank() -> None:
    model = RobotModel.from_urdf(str(ROOT / "assets" / "urdf" / "widowx_ai.urdf"))
    rng = np.random.default_rng(0)
    n = 16
    obj = np.c_[rng.uniform(0.25, 0.45, n), rng.uniform(-0.15, 0.15, n), np.full(n, 0.025)]
    yaw = rng.uniform(-np.pi / 2, np.pi / 2, n)
    quat = np.c_[np.cos(yaw / 2), np.zeros(n), np.zeros(n), np.sin(yaw / 2)]
    place = np.c_[rng.uniform(0.25, 0.45, n), rng.uniform(-0.15, 0.15, n), np.full(n, 0.025)]
    q0 = np.tile([0.0, 1.2, 1.0, -0.3, 0.0, 0.0, 0.044, 0.044], (n, 1))
    base = BaseFrame(np.eye(3), np.zeros(3))
    solver = PoseIK(model, "ee_gripper_link", options=RANK_OPTIONS)
    round32 = GraspGeometry(np.full(3, 0.025), True, depths=(0.7, 0.5), tilts=(0.0,), n_yaws=16)  # 32 candidates
    yaw_off, depth, tilt, _ = candidates(round32)
    pos, rot = grasp_poses(round32, obj[:, None], yaw[:, None] + yaw_off, np.broadcast_to(depth, (n, 32)),
                           np.broadcast_to(tilt, (n, 32)), place[:, None], "x", "y")
    p3, q3 = pos[:, :, :3].reshape(-1, 3), matrix_to_quat(rot[:, :, :3].reshape(-1, 3, 3))
    init = np.repeat(q0, 32 * 3, axis=0)
    times = []
    for _ in range(50):
        t0 = time.perf_counter()
        res = solver.solve(p3, q3, init_qpos=init)
        times.append(time.perf_counter() - t0)
    log.info("rank: 16 envs x 32 candidates x 3 poses (%d targets) in one call: median %.2f ms; %.1f %% converged",
             len(p3), 1e3 * statistics.median(times), 100 * res.converged.mean())
    cube = GraspGeometry(np.full(3, 0.025), False)
    times = []
    for _ in range(50):
        t0 = time.perf_counter()
        plan = rank_grasps(model, "ee_gripper_link", base, cube, obj, quat, place, q0, 0.09, "x", "y",
                           np.arange(6), solver)
        times.append(time.perf_counter() - t0)
    log.info("rank_grasps as the task calls it (cube: %d candidates x 5 poses x 16 envs, scoring included): median "
             "%.2f ms; every environment has a grasp: %s", plan.n_candidates, 1e3 * statistics.median(times),
             bool(plan.ok.all()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="success,speed,rank")
    parser.add_argument("--seeds", default="0:5")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.WARNING)
    parts = args.parts.split(",")
    unknown = set(parts) - {"success", "speed", "rank"}
    if unknown:
        parser.error(f"unknown --parts {sorted(unknown)}; choose from success, speed, rank")
    lo, hi = (int(x) for x in args.seeds.split(":"))
    if "rank" in parts:
        rank()
    if "speed" in parts:
        speed(args.repeats)
    if "success" in parts:
        success(range(lo, hi))


if __name__ == "__main__":
    main()
