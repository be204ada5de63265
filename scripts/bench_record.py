"""Recording pick-and-place with N 640x480 cameras (#38's speed figures), medians of --repeats in one sitting:

- episodes per minute and bytes per episode of ``app.record`` for each camera count and worker count (interleaved);
- where the time of one episode goes, in this process (one worker): the simulation, the cameras' pictures
  (PyBullet's getCameraImage, and the posing and copying around it), the H.264 encoding, and writing the dataset.

The cameras are configs/pick_place_cameras.yaml's cam_high and cam_low, and for more than two, further views of
the same workspace (the first camera's eye turned about the vertical through its target). Report the figures
with the machine's load (`uptime`).

    python scripts/bench_record.py [--cameras 2 4] [--workers 1 2] [--episodes 4] [--repeats 1]
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

import app.dataset.lerobot_writer as lerobot_writer
import app.dataset.video_segments as video_segments
import app.recording.blocks as blocks
import app.sim.cameras as sim_cameras
from app.record import main as record_main

log = logging.getLogger("bench_record")
ROOT = Path(__file__).resolve().parents[1]


def camera_config(n_cameras: int, folder: Path) -> Path:
    """pick_place_cameras.yaml with ``n_cameras`` cameras at 640x480, 30 fps."""
    run = yaml.safe_load((ROOT / "configs/pick_place_cameras.yaml").read_text())
    run["scene"] = str(ROOT / run["scene"])  # the config's scene path is relative to the repository root
    cams = run["scene_overrides"]["cameras"]
    first = cams[0]
    tx, ty, _ = first["target"]
    ex, ey, ez = first["eye"]
    radius, start = math.hypot(ex - tx, ey - ty), math.atan2(ey - ty, ex - tx)
    for k in range(len(cams), n_cameras):
        angle = start + 2 * math.pi * k / (n_cameras + 1)
        cams.append({**first, "name": f"cam_{k}", "eye": [tx + radius * math.cos(angle),
                                                          ty + radius * math.sin(angle), ez]})
    run["scene_overrides"]["cameras"] = cams[:n_cameras]
    path = folder / f"pick_place_{n_cameras}cams.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


def record(config: Path, episodes: int, workers: int, out: Path) -> tuple[float, float]:
    """(wall seconds, bytes per episode) of one recording."""
    start = time.perf_counter()
    assert record_main([str(config), "--episodes", str(episodes), "--workers", str(workers), "--cameras", "config",
                        "--keep-failed", "--out", str(out)]) == 0
    wall = time.perf_counter() - start
    return wall, sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / episodes


def timed(module, name: str, totals: dict, label: str) -> None:
    """Wrap ``module.name`` so that its calls' time adds up in ``totals[label]``."""
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            totals[label] += time.perf_counter() - start

    setattr(module, name, wrapper)


def split(config: Path, episodes: int, out: Path) -> dict[str, float]:
    """Seconds per episode in each stage of a one-worker recording (the stages nest: 'pictures' holds 'render')."""
    totals: dict[str, float] = defaultdict(float)
    timed(blocks, "run_shard", totals, "simulation")
    timed(blocks.EpisodeCameras, "render", totals, "pictures")
    timed(sim_cameras.SceneCameras, "render", totals, "render")
    timed(video_segments, "encode_h264", totals, "encode")
    timed(lerobot_writer.LeRobotWriter, "append", totals, "write")
    wall, _ = record(config, episodes, 1, out)
    totals["total"] = wall
    return {k: v / episodes for k, v in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cameras", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        configs = {n: camera_config(n, folder) for n in args.cameras}
        runs: dict[tuple, list] = defaultdict(list)
        for i in range(args.repeats):
            for n in args.cameras:
                for w in args.workers:
                    runs[n, w].append(record(configs[n], args.episodes, w, folder / f"r{i}c{n}w{w}"))
        for (n, w), found in runs.items():
            wall = statistics.median(t for t, _ in found)
            log.info("%d cameras, %d worker(s): %.1f s for %d episodes (%.2f episodes/min), %.2f MB an episode",
                     n, w, wall, args.episodes, 60 * args.episodes / wall, found[0][1] / 1e6)
        for n in args.cameras:
            stages = split(configs[n], args.episodes, folder / f"split{n}")
            log.info("%d cameras, one worker, per episode: %s", n,
                     ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()))


if __name__ == "__main__":
    main()
