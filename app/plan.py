"""Command line for a batch of motion-planning problems:
``python -m app.plan PROBLEMS.yaml --out DIR [--workers N] [--ray-address A]``.

PROBLEMS.yaml names the robot, the boxes to avoid (base frame), the planner's options and the problems (start,
goal joints or an end-effector pose with masks, an optional seed); app/planning/problems.py describes the file.
DIR gets plans.json (per problem: success, the reason a plan failed (start_in_collision, goal_in_collision,
no_ik_goal, timeout, path_in_collision), planning time, path lengths, the closest clearance along the timed path;
a summary) and paths.npz (path_<i> the waypoints (N, n_dofs), trajectory_<i> the timed joints at the file's rate),
both renamed into place together at the end. With --workers N the problems are shared by this process and N Ray
workers; every problem has its own seed, so the answers are the same for any N. A malformed file is an error
naming the file and key (exit 2), and so is a problem plan() would refuse (a start or goal outside the joint
windows, a zero quaternion, a two-axis rot_mask, a negative seed): every problem is checked before any planning.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import numpy as np

from app.errors import InputError

log = logging.getLogger("app.plan")

_models: dict[str, object] = {}  # per process: the model of each description, loaded once


def plan_item(args: tuple) -> dict:
    """(batch, index) -> problem ``index`` solved (app.planning.problems.solve_problem); here or on a worker."""
    from app import RobotModel
    from app.planning.problems import solve_problem

    batch, index = args
    if batch.robot not in _models:
        _models[batch.robot] = RobotModel.from_urdf(batch.robot)
    return solve_problem(_models[batch.robot], batch, batch.problems[index])


def main(argv: list[str] | None = None) -> int:
    from app.runtime.command import command_main

    parser = argparse.ArgumentParser(prog="python -m app.plan", description=__doc__.split("\n\n")[1].replace("``", ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problems", help="PROBLEMS.yaml: robot, boxes, options, problems")
    parser.add_argument("--out", required=True, help="output folder: plans.json, paths.npz")
    parser.add_argument("--workers", type=int, default=1, help="Ray worker processes (1: this process)")
    parser.add_argument("--ray-address", default=None, help="join this Ray cluster (default: $RAY_ADDRESS or local)")
    return command_main(parser.parse_args, _plan, argv, "no output was written or replaced")


def _plan(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    from app import RobotModel
    from app.planning.problems import check_problems, read_problems
    from app.runtime.outputs import OutputSet

    batch = read_problems(args.problems)
    batch = batch._replace(robot=str(Path(batch.robot).resolve()))
    check_problems(_models.setdefault(batch.robot, RobotModel.from_urdf(batch.robot)), batch, args.problems)
    outputs = OutputSet(args.out)  # the folder checked before any planning
    try:
        results = _solve_all(batch, args.workers, args.ray_address)
        _write(outputs, results)
    except BaseException:
        outputs.discard()  # an interrupted or failed batch leaves the folder as it was
        raise
    solved = sum(r["success"] for r in results)
    times = sorted(r["planning_s"] for r in results)
    log.info("%s: %d of %d problems planned; planning median %.3f s, worst %.3f s", args.out, solved, len(results),
             float(np.median(times)), times[-1])
    for r in results:
        if not r["success"]:
            log.info("  %s: %s (%s)", r["name"], r["reason"], r["detail"])
    return 0


def _solve_all(batch, workers: int, ray_address: str | None) -> list[dict]:
    items = [(batch, i) for i in range(len(batch.problems))]
    if workers == 1:
        return [plan_item(item) for item in items]
    from app.runtime.ray_session import ray_released
    from app.runtime.work_pool import run_everywhere

    with ray_released():
        return run_everywhere(items, plan_item, workers, ray_address)[0]


def _write(outputs, results: list[dict]) -> None:
    plans = [{k: v for k, v in r.items() if k != "arrays"} for r in results]
    failed: dict[str, list[str]] = {}
    for p in plans:
        if not p["success"]:
            failed.setdefault(p["reason"], []).append(p["name"])
    summary = {"planned": sum(p["success"] for p in plans), "n_problems": len(plans), "failed": failed,
               "planning_median_s": float(np.median([p["planning_s"] for p in plans]))}
    arrays = {f"{kind}_{i}": r["arrays"][kind] for i, r in enumerate(results) for kind in ("path", "trajectory")}
    outputs.temporary("plans.json").write_text(json.dumps({"summary": summary, "plans": plans}, indent=1) + "\n")
    np.savez(outputs.temporary("paths.npz"), **arrays)
    outputs.commit()


if __name__ == "__main__":
    sys.exit(main())
