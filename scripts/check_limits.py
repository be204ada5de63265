"""Joint-limit promise under contact: every manipulation config over seeds, the largest excess past a limit.

    python scripts/check_limits.py [--seeds 0-9] [--configs configs/pick_place.yaml ...]

Runs ``app.run CONFIG --seed S --no-video`` for each pair in a scratch folder and prints, per config, the
worst ``invariants.joint_limit_excess_max_rad`` (the promise is 1e-6), the hard stops' hits, placed counts and the
largest slip.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIGS = ("configs/pick_place.yaml", "configs/pick_place_cameras.yaml", "configs/script_pick.yaml",
           "configs/handover.yaml", "configs/pick_shelf.yaml", "configs/pick_shelf_qp.yaml", "configs/handover_wall.yaml",
           "configs/handover_wall_qp.yaml")  # every config that moves objects
log = logging.getLogger("check_limits")


def run_one(config: str, seed: int, out: Path) -> dict:
    """One headless run's report (the command's own JSON); a failed run raises with its last stderr line."""
    cmd = [sys.executable, "-m", "app.run", config, "--seed", str(seed), "--no-video", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads((out / "report.json").read_text())


def seeds_of(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    with tempfile.TemporaryDirectory() as tmp:
        for config in args.configs:
            rows = [run_one(config, s, Path(tmp) / f"{Path(config).stem}_{s}") for s in seeds_of(args.seeds)]
            excess = [r["invariants"]["joint_limit_excess_max_rad"] for r in rows]
            hits = sum(r["invariants"].get("joint_stop_hits", 0) for r in rows)
            placed = [r["summary"].get("placed") for r in rows]
            slip = [r["summary"].get("slip_max_m") or 0.0 for r in rows]
            log.info("%s: worst excess %.3g (seed %d), per seed %s; %d stop hits; placed %s; largest slip %.2f mm",
                     config, max(excess), seeds_of(args.seeds)[excess.index(max(excess))],
                     [f"{e:.1e}" for e in excess], hits, placed, 1e3 * max(slip))


if __name__ == "__main__":
    main()
