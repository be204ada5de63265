"""The gripper's contact settings, swept: finger force [N] x solver iterations x physics rate [Hz] on
``configs/pick_place.yaml`` (16 environments, seed 0, the ik controller), each row the cubes placed, the
largest slip of a held cube in the gripper frame [mm], the median over environments [mm], and the physics time
per simulated second.

Usage: python scripts/sweep_grip.py [--forces 5,10,20,40] [--iterations 50] [--hz 240] [--speed 0.3]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.episode.execute import execute

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("sweep_grip")


def one(force: float, iterations: int, hz: float, speed: float, cone: bool) -> str:
    sets = {"scene_overrides.robot.gripper.force": force, "scene_overrides.solver_iterations": iterations,
            "scene_overrides.physics_hz": hz, "scene_overrides.cone_friction": cone, "task.speed": speed}
    run = load_run_config(ROOT / "configs" / "pick_place.yaml", sets=sets)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        result = execute(run, Path(out), video=False, show_progress=False)
        wall = time.perf_counter() - t0
    slips = np.array([ep["slip_max_m"] for ep in result.episodes]) * 1e3
    s = result.summary
    return (f"| {force:g} | {iterations} | {hz:g} | {'cone' if cone else 'pyramid'} | {s['placed']}/{s['n_envs']} "
            f"{dict((k, len(v)) for k, v in s['failed'].items()) or ''} | {slips.max():.2f} | {np.median(slips):.2f} | "
            f"{result.timings['physics'] / run.duration:.3f} | {run.duration / wall:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forces", default="5,10,20,40")
    parser.add_argument("--iterations", default="50")
    parser.add_argument("--hz", default="240")
    parser.add_argument("--speed", type=float, default=0.3, help="carry speed bound [m/s]")
    parser.add_argument("--cone", default="false", help="true, false or both")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)
    cones = {"true": [True], "false": [False], "both": [True, False]}[args.cone]
    log.info("| force [N] | solver iterations | physics [Hz] | friction | placed | slip max [mm] | slip median [mm] | "
             "physics s per s | real time |")
    log.info("|---|---|---|---|---|---|---|---|---|")
    for hz in (float(h) for h in args.hz.split(",")):
        for iterations in (int(i) for i in args.iterations.split(",")):
            for cone in cones:
                for force in (float(f) for f in args.forces.split(",")):
                    log.info("%s", one(force, iterations, hz, args.speed, cone))


if __name__ == "__main__":
    main()
