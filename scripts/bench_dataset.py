"""Dataset figures, medians of --repeats in one sitting (report them with the machine load, `uptime`):

- record: `app.record` of CONFIG with N episodes on each of --workers (wall seconds, episodes per minute;
  configs/pick_place_cameras.yaml adds two 640x480 cameras);
- replay: a 30 s episode at 30 fps (recorded from configs/single_ik.yaml) replayed without video, as a
  multiple of real time (the replay loop alone, scene built outside the timing).

    python -m scripts.bench_dataset [--config configs/pick_place.yaml] [--episodes 10] [--repeats 3] [--workers 1 2]
        [--format lerobot|act-hdf5] [--duration S] [--no-replay]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from app.config.loader import load_run_config
from app.dataset import UnitsGuess, load_dataset
from app.episode.scene_build import build_scene
from app.record import main as record_main
from app.replay import replay_episode

log = logging.getLogger("bench_dataset")


def _record(config: str, episodes: int, out: Path, extra: list[str] = ()) -> float:
    start = time.perf_counter()
    assert record_main([config, "--episodes", str(episodes), "--out", str(out), "--keep-failed", *extra]) == 0
    return time.perf_counter() - start


def _replay(dataset: Path) -> float:
    run = load_run_config("configs/single_ik.yaml", n_envs=1)
    scene, robot = build_scene(run)
    try:
        ds = load_dataset(dataset)
        start = time.perf_counter()
        replay_episode(robot, scene, ds, 0, UnitsGuess("si", "bench"), "action", run.scene_config.robot.ee_link,
                       run.scene_config.physics_hz)
        seconds = time.perf_counter() - start
    finally:
        scene.close()
    return len(ds.episodes[0].state) / ds.fps / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/pick_place.yaml")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1], help="worker counts, interleaved")
    parser.add_argument("--format", choices=("lerobot", "act-hdf5"), default="lerobot")
    parser.add_argument("--duration", type=float, default=None, help="episode length [s] (default: the config's)")
    parser.add_argument("--no-replay", action="store_true", help="the record figure only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        walls: dict[int, list[float]] = {w: [] for w in args.workers}
        for i in range(args.repeats):  # interleaved
            for w in args.workers:
                extra = ["--workers", str(w), "--format", args.format]
                extra += [] if args.duration is None else ["--duration", str(args.duration)]
                walls[w].append(_record(args.config, args.episodes, Path(tmp) / f"rec{i}w{w}", extra))
        for w, times in walls.items():
            wall = statistics.median(times)
            log.info("record %s (%s) x %d episodes, %d worker(s): median %.2f s (%.1f episodes/min) of %s",
                     args.config, args.format, args.episodes, w, wall, 60 * args.episodes / wall,
                     ", ".join(f"{t:.2f}" for t in times))
        if args.no_replay:
            return
        _record("configs/single_ik.yaml", 1, Path(tmp) / "long", ["--duration", "30"])
        speeds = [_replay(Path(tmp) / "long") for _ in range(args.repeats)]
        log.info("replay of a 30 s, 30 fps episode: median %.1fx real time of %s", statistics.median(speeds),
                 ", ".join(f"{s:.1f}" for s in speeds))


if __name__ == "__main__":
    main()
