"""Time from a run file to a built scene: ``load_run_config`` + ``build_scene`` (one environment), medians of
``--repeats``, for a one-robot config and a two-arm rig; and how often the robot description was read, composed and
parsed on the way (cProfile's call counts). Run it on two checkouts in one sitting to compare.

Usage: PYTHONPATH=. python scripts/bench_config_load.py [--repeats 7]  (from the checkout to measure)
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

from app.config.loader import load_run_config
from app.episode.scene_build import build_scene

CONFIGS = ("configs/single_ik.yaml", "configs/bimanual_qp.yaml")
COUNTED = ("read_description", "compose_urdf", "parse_urdf_string")


def _load_and_build(config: str) -> None:
    scene, _ = build_scene(load_run_config(config, n_envs=1))
    scene.close()


def _calls(config: str) -> dict[str, int]:
    profile = cProfile.Profile()
    profile.runcall(_load_and_build, config)
    stats = pstats.Stats(profile).stats
    return {name: sum(s[1] for (file, _, func), s in stats.items() if func == name and "app/kinematics" in file)
            for name in COUNTED}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    for config in CONFIGS:
        _load_and_build(config)  # imports and numba caches warm
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            _load_and_build(config)
            times.append(time.perf_counter() - start)
        print(f"{config}: load + build median {statistics.median(times) * 1e3:.1f} ms; calls {_calls(config)}")


if __name__ == "__main__":
    main()
