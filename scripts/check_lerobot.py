"""Load a dataset with the real ``lerobot`` package and check it: episode and frame counts, shapes, timestamps
and one decoded frame per camera and episode.

Run it with a Python where lerobot 0.4.x is installed (not this app's environment), e.g.:

    python -m venv /work/venv-lerobot && /work/venv-lerobot/bin/pip install "lerobot>=0.4,<0.5"
    /work/venv-lerobot/bin/python scripts/check_lerobot.py DATASET_DIR [--episodes N] [--frames N]

HF_HUB_OFFLINE=1 is set here before lerobot is imported: a local dataset that fails to load would otherwise
fall back to the Hub and look like a network error. Videos are decoded with the pyav backend (lerobot's
torchcodec backend needs system FFmpeg libraries). Exits 1 with the failed checks listed, 0 when all pass.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

log = logging.getLogger("check_lerobot")
MAX_MEAN_DIFF = 4.0 / 255.0  # lerobot's frame against the file's n-th frame decoded in order: same frame, same codec


def _nth_frame(path: Path, n: int):
    """The ``n``-th frame (from 0) of the video at ``path``, decoded in order with PyAV; (3, h, w) in [0, 1]."""
    import av
    import numpy as np
    with av.open(str(path)) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i == n:
                return np.moveaxis(frame.to_ndarray(format="rgb24"), -1, 0) / 255.0
    raise IndexError(f"{path} has fewer than {n + 1} frames")


def _checks(root: Path, want_episodes: int | None, want_frames: int | None) -> list[str]:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    info = json.loads((root / "meta" / "info.json").read_text())
    ds = LeRobotDataset("local/check", root=root, video_backend="pyav")
    failures = []

    def check(ok: bool, what: str) -> None:
        log.info("%s %s", "ok  " if ok else "FAIL", what)
        if not ok:
            failures.append(what)

    check(want_episodes is None or ds.num_episodes == want_episodes,
          f"episodes: lerobot {ds.num_episodes}, expected {want_episodes}")
    check(want_frames is None or ds.num_frames == want_frames,
          f"frames: lerobot {ds.num_frames}, expected {want_frames}")
    check(len(ds) == info["total_frames"], f"len(dataset) {len(ds)} == info total_frames {info['total_frames']}")
    cameras = ds.meta.video_keys
    check(ds.meta.stats is not None and all(k in ds.meta.stats for k in info["features"]),
          f"meta/stats.json has every feature ({sorted(ds.meta.stats or {})})")
    log.info("robot_type %s, fps %s, cameras %s", ds.meta.robot_type, ds.fps, cameras)
    for ep in range(ds.num_episodes):
        row = ds.meta.episodes[ep]
        for at in (row["dataset_from_index"], row["dataset_to_index"] - 1):  # first and last frame of the episode
            item = ds[at]
            for key in ("observation.state", "action", "observation.environment_state"):
                if key not in info["features"]:  # a scene without objects has no environment state
                    continue
                shape = tuple(item[key].shape)
                check(shape == tuple(info["features"][key]["shape"]) and bool(item[key].isfinite().all()),
                      f"episode {ep} index {at} {key} shape {shape}, finite")
            for cam in cameras:
                frame = item[cam]
                h, w, c = info["features"][cam]["shape"]
                check(tuple(frame.shape) == (c, h, w), f"episode {ep} index {at} {cam} decoded {tuple(frame.shape)}")
                nth = round(row[f"videos/{cam}/from_timestamp"] * ds.fps) + int(item["frame_index"])
                diff = float(abs(frame.numpy() - _nth_frame(root / ds.meta.get_video_file_path(ep, cam), nth)).mean())
                check(diff <= MAX_MEAN_DIFF, f"episode {ep} index {at} {cam}: lerobot's frame is the file's frame "
                                             f"{nth} (mean difference {diff:.4f}, "
                                             f"frame mean {float(frame.mean()):.3f})")
            check(item["task"] == row["tasks"][0], f"episode {ep} index {at} task {item['task']!r}")
            got = int(item["episode_index"])
            check(got == ep, f"episode {ep} index {at} episode_index {got}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--episodes", type=int, help="expected number of episodes")
    parser.add_argument("--frames", type=int, help="expected number of frames")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    import lerobot
    log.info("lerobot %s on Python %s: %s", lerobot.__version__, sys.version.split()[0], args.dataset)
    failures = _checks(args.dataset.resolve(), args.episodes, args.frames)
    log.info("%d failed check(s)" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
