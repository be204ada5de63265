"""A strip of frames from several randomised episodes, side by side in one PNG: one row per episode, its named
cameras' frames at a few times (the recording's own path: app.recording.blocks.record_block renders them).

    python scripts/randomized_strip.py [CONFIG] [--episodes 4] [--times 0 2 4 6] [--look kit] [--out strip.png]

CONFIG (default configs/pick_place_cameras.yaml) is run with the randomisation below unless it has its own.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from app.config.loader import load_run_config
from app.config.randomization import randomization_of
from app.episode.randomize import draw
from app.recording.blocks import Sink, record_block

DEFAULT_RANDOMIZATION = {
    "lighting": {"direction_deg": 35, "color": [[0.75, 0.75, 0.7], [1.0, 1.0, 1.0]], "ambient": [0.35, 0.8],
                 "diffuse": [0.2, 0.6], "specular": [0.0, 0.2]},
    "colors": {"table": 0.15, "objects": 0.35},
    "cameras": {"position": 0.03, "target": 0.03, "rotation_deg": 3, "fov_deg": 4},
    "objects": {"size_scale": [0.85, 1.15], "mass_scale": [0.6, 1.6], "friction": [0.7, 1.3]},
    "gripper": {"force": [3.5, 6.0]},
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", nargs="?", default="configs/pick_place_cameras.yaml")
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--times", type=float, nargs="+", default=[0.0, 2.0, 4.0, 6.0], help="[s] of each episode")
    p.add_argument("--look", default="kit", help="the scene's look: plain or kit")
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("randomized_strip.png"))
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    base = load_run_config(args.config)
    cams = [{**_camera(c), "width": args.width, "height": args.height} for c in base.scene_config.cameras]
    sets = {"scene_overrides.look": args.look, "scene_overrides.cameras": cams}
    if randomization_of(base) is None:
        sets["randomization"] = DEFAULT_RANDOMIZATION
    run = load_run_config(args.config, sets, n_envs=args.episodes, seed=args.seed, duration=max(args.times) + 0.1)
    block = record_block((run, np.arange(args.episodes), Sink(None)))
    rows = []
    for e, episode in enumerate(block.episodes):
        frames = [images[min(int(round(t * run.video.fps)), len(images) - 1)]
                  for images in episode.images.values() for t in args.times]
        rows.append(np.concatenate(frames, axis=1))
        d = draw(run, e)
        print(f"episode {e}: light {np.round(d['lighting']['light_direction'], 2).tolist()}, ambient "
              f"{d['lighting']['ambient']:.2f}, cube rgb {np.round(d['colors']['objects']['cube'], 2).tolist()}, "
              f"size x{d['objects']['cube']['size_scale']:.3f}, success {block.outcomes[e]}")
    imageio.imwrite(args.out, np.concatenate(rows, axis=0))
    print(f"wrote {args.out}: {args.episodes} episodes x {len(run.scene_config.cameras)} cameras x "
          f"{len(args.times)} times at {args.width}x{args.height}")


def _camera(cam) -> dict:
    """A camera stream as its YAML mapping."""
    from dataclasses import asdict

    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cam).items()}


if __name__ == "__main__":
    main()
