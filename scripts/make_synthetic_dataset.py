"""Write a LeRobot v3.0 dataset of synthetic episodes with this app's writer (for scripts/check_lerobot.py and
for timing the writer): smooth joint trajectories in the Trossen layout and moving-pattern camera frames.

    python scripts/make_synthetic_dataset.py OUT [--episodes 5] [--frames 90] [--arms 1] [--size 640x480]
        [--chunks-size N] [--data-mb MB] [--video-mb MB]   (info.json's file limits: small ones roll files over)
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

from app.dataset import ROBOT_TYPES, CameraSpec, DatasetSpec, EpisodeFrames, LeRobotWriter, trossen_names
from app.dataset.rollover import FileLimits

log = logging.getLogger("make_synthetic_dataset")
CAMERAS = ("cam_high", "cam_left_wrist")


def _frames(n: int, height: int, width: int, seed: int) -> np.ndarray:
    """A diagonal colour ramp sliding one pixel per frame, plus the frame's index in its top-left block."""
    y, x = np.mgrid[0:height, 0:width]
    frames = np.empty((n, height, width, 3), dtype=np.uint8)
    for k in range(n):
        frames[k, ..., 0] = (x + y + k + seed * 37) % 256
        frames[k, ..., 1] = (2 * x + k) % 256
        frames[k, ..., 2] = (3 * y + seed * 11) % 256
        frames[k, :16, :16] = (8 * k) % 256
    return frames


def _episode(index: int, n: int, n_arms: int, height: int, width: int) -> EpisodeFrames:
    t = np.linspace(0.0, 1.0, n)[:, None]
    phase = np.arange(7 * n_arms)[None, :]
    state = 0.4 * np.sin(2 * np.pi * t + phase + index)
    state[:, 6::7] = 0.022 * (1 + np.sin(2 * np.pi * t[:, 0:1] + index))  # grippers [m]
    images = {f"observation.images.{cam}": _frames(n, height, width, index * 2 + i) for i, cam in enumerate(CAMERAS)}
    return EpisodeFrames("synthetic sweep", state, np.roll(state, -1, axis=0), images)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--frames", type=int, default=90)
    parser.add_argument("--arms", type=int, choices=(1, 2), default=1)
    parser.add_argument("--size", default="640x480", help="camera WIDTHxHEIGHT")
    parser.add_argument("--chunks-size", type=int, default=FileLimits.chunks_size, help="files per chunk folder")
    parser.add_argument("--data-mb", type=float, default=FileLimits.data_files_size_in_mb, help="data file limit")
    parser.add_argument("--video-mb", type=float, default=FileLimits.video_files_size_in_mb, help="video file limit")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    width, height = (int(v) for v in args.size.split("x"))
    names = tuple(trossen_names(args.arms))
    spec = DatasetSpec(30, ROBOT_TYPES[args.arms], names, names,
                       tuple(CameraSpec(f"observation.images.{cam}", height, width) for cam in CAMERAS))
    writer = LeRobotWriter(args.out, spec, FileLimits(args.chunks_size, args.data_mb, args.video_mb))
    episodes = [_episode(i, args.frames, args.arms, height, width) for i in range(args.episodes)]
    start = time.perf_counter()
    for frames in episodes:
        writer.append(frames)
    seconds = time.perf_counter() - start
    log.info("%d episodes x %d frames, %d cameras %dx%d: written in %.2f s (%.1f rows/s, a frame per camera each)",
             args.episodes, args.frames, len(CAMERAS), width, height, seconds, args.episodes * args.frames / seconds)


if __name__ == "__main__":
    main()
