"""Benchmark of app.planning: seeded random scenes (a table and 3-8 boxes or shelves around the arms), start/goal
pairs known to have a solution, planned with a 1 s budget; success rate, median and p95 planning time, path length
before and after shortcutting; every path re-checked by PyBullet's closest points at <= 1 mrad steps; optionally
pybullet-planning's RRT-Connect on the same problems.

    PYTHONPATH=. python scripts/bench_plan.py --robot widowx --problems 100
    PYTHONPATH=. python scripts/bench_plan.py --robot stationary --problems 100 --referee 30 --peer
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.planning import PlanOptions, plan
from app.planning.sampling import arm_groups, random_valid
from app.planning.space import PlanningSpace

log = logging.getLogger("bench_plan")
REF = ROOT.parent / "shared" / "reference"
ROBOTS = {
    "widowx": (ROOT / "assets" / "urdf" / "widowx_ai.urdf", None, ["ee_gripper_link"],
               [0.0, 1.0, 0.8, 0.0, 0.0, 0.0, 0.02, 0.02], [(0.0, 0.0)]),
    "stationary": (REF / "trossen_arm_description" / "urdf" / "stationary_ai.urdf", [str(REF)],
                   ["follower_left_ee_gripper_link", "follower_right_ee_gripper_link"],
                   [0.0, 1.2, 1.0, -0.3, 0.0, 0.0, 0.02, 0.02] * 2, [(-0.02, 0.4575), (-0.02, -0.4575)]),
}


# --region work: starts and goals drawn with each arm in front of its base and the wrist (joints 4, 5) within
# +-0.3 rad: the Stationary AI's sphere model keeps link_4 and link_6 apart only near joints 4 = 5 = 0 (its spheres
# for that pair are 10-14 mm inside PyBullet's distance at joint 4 = 0 and overlap from |joint 4| ~ 0.4 on, and at
# |joint 5| ~ 1.5, where PyBullet still has 5 mm up to |joint 4| = 1.0), so its free space elsewhere is slivers
WORK = (np.array([-1.5, 0.2, 0.2, -1.57, -0.3, -0.3]), np.array([1.5, 2.0, 2.0, 1.57, 0.3, 0.3]))


def random_world(rng: np.random.Generator, robot: str, bases) -> World:
    """A table (the WidowX's; the Stationary AI has its own tabletop) and 3-8 boxes or shelves (tall thin walls)
    on it, 0.15-0.45 m from an arm's base."""
    boxes = [WorldBox("table", (0.6, 0.6, 0.02), (0.2, 0.0, -0.0205))] if robot == "widowx" else []
    for i in range(int(rng.integers(3, 9))):
        bx, by = bases[int(rng.integers(len(bases)))]
        r, a = rng.uniform(0.15, 0.45), rng.uniform(-np.pi, np.pi)
        if rng.random() < 0.4:  # a shelf: a wall up to 0.35 m tall
            half = (rng.uniform(0.08, 0.15), 0.01, rng.uniform(0.08, 0.17))
        else:
            half = tuple(rng.uniform(0.02, 0.06, 3))
        quat = (np.cos(a / 2), 0.0, 0.0, np.sin(a / 2))
        boxes.append(WorldBox(f"box{i}", half, (bx + r * np.cos(a), by + r * np.sin(a), half[2] + 1e-3), quat))
    return World(boxes=tuple(boxes))


def problems(robot: str, model, count: int, seed: int, check_timeout: float, region: str = "full"):
    """(world, cm, start, goal) with a solution (found by a 10 s search first), and how many were dropped."""
    _, pkgs, ees, home, bases = ROBOTS[robot]
    rng = np.random.default_rng(seed)
    out, dropped = [], 0
    while len(out) < count:
        world = random_world(rng, robot, bases)
        cm = collision_model(model, world, package_dirs=pkgs)
        space = PlanningSpace(model, cm, np.array(home))
        groups = arm_groups(space, ees) if len(ees) > 1 else None
        box = None if region == "full" else (np.tile(WORK[0], len(ees)), np.tile(WORK[1], len(ees)))
        start = random_valid(space, rng, groups=groups, tries=20, box=box)
        goal = random_valid(space, rng, groups=groups, tries=20, box=box)
        if start is None or goal is None:
            dropped += 1
            continue
        start, goal = space.full(start), space.full(goal)
        ref = plan(model, goal, start, collision=cm, options=PlanOptions(timeout=check_timeout, seed=seed + 1))
        if not ref.success:
            dropped += 1
            continue
        out.append((world, cm, start, goal))
    return out, dropped


def run_ours(model, probs, timeout: float, seed: int):
    rows = []
    for world, cm, start, goal in probs:
        res = plan(model, goal, start, collision=cm, options=PlanOptions(timeout=timeout, seed=seed, max_retry=0))
        rows.append(res)
    return rows


def referee(model, pkgs, probs, results, count: int, step: float):
    """PyBullet closest points along the first ``count`` successful paths: number checked, number in contact."""
    from app.sim.path_check import PyBulletReferee

    checked = hits = 0
    for (world, cm, _, _), res in zip(probs, results):
        if checked >= count or not res.success:
            continue
        with PyBulletReferee(model, cm, pkgs) as ref:
            hit = ref.check_path(res.path, step=step)
        checked += 1
        if hit is not None:
            hits += 1
            log.warning("PyBullet contact on a planned path: %s", hit)
    return checked, hits


def summary(name: str, seconds: np.ndarray, ok: np.ndarray, limit: float) -> str:
    solved = ok & (seconds <= limit)
    s = seconds[ok] * 1e3 if ok.any() else np.array([np.nan])
    return (f"{name}: solved within {limit:g} s {solved.sum()}/{len(ok)} ({100 * solved.mean():.1f} %); time [ms] "
            f"median {np.median(s):.1f}, p95 {np.percentile(s, 95):.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", choices=sorted(ROBOTS), default="widowx")
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1.0, help="[s] budget per problem")
    ap.add_argument("--check-timeout", type=float, default=10.0, help="[s] search that proves a problem solvable")
    ap.add_argument("--referee", type=int, default=1000, help="paths re-checked by PyBullet (the first N solved)")
    ap.add_argument("--step", type=float, default=1e-3, help="[rad] per-DOF step of the PyBullet re-check")
    ap.add_argument("--region", choices=("full", "work"), default="full",
                    help="starts and goals over the joint windows, or in the work region (WORK above)")
    ap.add_argument("--peer", action="store_true", help="pybullet-planning's RRT-Connect on the same problems")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    urdf, pkgs, *_ = ROBOTS[args.robot]
    model = RobotModel.from_urdf(str(urdf), package_dirs=pkgs)
    t0 = time.perf_counter()
    probs, dropped = problems(args.robot, model, args.problems, args.seed, args.check_timeout, args.region)
    print(f"{args.robot} ({args.region} region): {len(probs)} problems ({dropped} dropped: no valid start/goal or no path in "
          f"{args.check_timeout:g} s) in {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.2f}")
    results = run_ours(model, probs, args.timeout, args.seed)
    sec = np.array([r.seconds for r in results])
    ok = np.array([r.success for r in results])
    print(summary("ours (OMPL RRTConnect + shortcut + dense re-check)", sec, ok, args.timeout)
          + f"; load {os.getloadavg()[0]:.2f}")
    raw = np.array([r.raw_length for r in results if r.success])
    short = np.array([r.length for r in results if r.success])
    print(f"path length [rad] median before shortcutting {np.median(raw):.2f}, after {np.median(short):.2f} "
          f"(ratio {np.median(short / raw):.2f})")
    checked, hits = referee(model, pkgs, probs, results, args.referee, args.step)
    print(f"PyBullet closest points at <= {args.step * 1e3:g} mrad steps: {hits} of {checked} paths in contact; "
          f"load {os.getloadavg()[0]:.2f}")
    if args.peer:
        from scripts.bench_plan_peer import run_peer

        peer_sec, peer_ok = run_peer(model, pkgs, probs, args.timeout)
        print(summary("pybullet-planning birrt", peer_sec, peer_ok, args.timeout) + f"; load {os.getloadavg()[0]:.2f}")
        both = ok & peer_ok
        if both.any():
            print(f"median time ratio pybullet-planning / ours on problems both solved: "
                  f"{np.median(peer_sec[both] / sec[both]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
