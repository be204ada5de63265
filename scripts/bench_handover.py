"""configs/handover.yaml without video: its real-time factor (simulated seconds per wall second, all environments
together) with the two-arm scene's 150 PyBullet solver iterations and with PyBullet's default 50, alternating run
by run in one sitting; medians. Also the run's own split of the wall time into physics and control.

Usage: python scripts/bench_handover.py [--repeats 3] [--duration S (the config's: 16)] [--n-envs 8]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from app.config.loader import load_run_config
from app.episode.execute import execute

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench_handover")


def run_once(iterations: int, duration: float | None, n_envs: int) -> dict:
    """One run without video: wall time [s], real-time factor, the report's timings and placed count."""
    run = load_run_config(ROOT / "configs" / "handover.yaml", duration=duration, n_envs=n_envs)
    duration = run.duration
    run = dataclasses.replace(run, scene_config=dataclasses.replace(run.scene_config, solver_iterations=iterations))
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        execute(run, Path(out), video=False, show_progress=False)
        wall = time.perf_counter() - t0
        report = json.loads((Path(out) / "report.json").read_text())
    return {"wall_s": wall, "rtf": duration / wall, "physics_s": report["timings_s"]["physics"],
            "control_s": report["timings_s"]["control"], "placed": report["summary"].get("placed")}


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--duration", type=float, default=None)
    p.add_argument("--n-envs", type=int, default=8)
    a = p.parse_args(argv)
    run_once(150, 0.5, 1)  # numba's compile and the caches, not timed
    results: dict[int, list[dict]] = {150: [], 50: []}
    for _ in range(a.repeats):
        for iterations in results:
            results[iterations].append(run_once(iterations, a.duration, a.n_envs))
    log.info("load average %.1f; %d environments, %s s simulated, medians of %d", os.getloadavg()[0], a.n_envs,
             a.duration or "the config's", a.repeats)
    for iterations, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "rtf", "physics_s", "control_s")}
        log.info("solver_iterations %3d: real-time factor %.2fx (wall %.1f s: physics %.1f s, control %.1f s); "
                 "placed %s", iterations, med["rtf"], med["wall_s"], med["physics_s"], med["control_s"],
                 [r["placed"] for r in runs])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
