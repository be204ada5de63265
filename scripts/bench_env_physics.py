"""Whether environments that cannot touch cost each other physics time: the pick-and-place and handover configs
without video at 1 environment and at N, their physics time (the run's own ``timings_s.physics``: PyBullet's
stepSimulation with every contact) per environment and simulated second, medians of --repeats, interleaved; and
the whole command's real-time factor (start-up included, ``python -m app.run ... --no-video``).

If a world of N environments spent time on pairs of bodies from different environments (their AABBs never
overlap: the grid spacing is larger than an arm's reach), the per-environment cost would grow with N; equal costs
at 1 and N say the broadphase already keeps them apart, and per-environment collision filter groups or one
PyBullet world per environment (N clients, N stepSimulation calls) have nothing left to save.

    python scripts/bench_env_physics.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench_env_physics")
CASES = (("configs/pick_place.yaml", "ik", (1, 16)), ("configs/pick_place.yaml", "qp", (1, 16)),
         ("configs/handover.yaml", "qp", (1, 8)))


def command(config: str, controller: str, n_envs: int, out: Path) -> tuple[float, dict]:
    """(wall [s] of the whole command, its report) for one run of ``config`` with ``controller``."""
    run = yaml.safe_load((ROOT / config).read_text())
    run["scene"] = str(ROOT / run["scene"])
    run["controller"]["type"] = controller
    path = Path(out) / Path(config).name
    path.write_text(yaml.safe_dump(run))
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "app.run", str(path), "--no-video", "--n-envs", str(n_envs),
                          "--out", str(out / "o")], cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(res.stderr[-2000:])
    return wall, json.loads((out / "o" / "report.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    found: dict[tuple, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            for config, controller, counts in CASES:
                for n in counts:
                    out = Path(tmp) / f"{i}-{Path(config).stem}-{controller}-{n}"
                    out.mkdir()
                    found.setdefault((config, controller, n), []).append(command(config, controller, n, out))
    for (config, controller, n), runs in found.items():
        physics = statistics.median(r["timings_s"]["physics"] for _, r in runs)
        wall = statistics.median(w for w, _ in runs)
        sim_s = float(yaml.safe_load((ROOT / config).read_text())["duration"])
        s = runs[0][1]["summary"]
        log.info("%s %s, %2d envs: physics %.2f ms per environment and simulated second; whole command %.2fx real "
                 "time (wall %.2f s); placed %s/%s", config, controller, n, 1e3 * physics / n / sim_s,
                 sim_s / wall, wall, s.get("placed"), s.get("n_envs"))


if __name__ == "__main__":
    main()
