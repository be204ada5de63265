"""What each element of the kit look costs per 640x480 frame (TinyRenderer, medians), and a PNG of our frame in
the plain and the kit look side by side.

    python scripts/bench_look.py [--frames 15] [--png look.png]

Each row adds one element to the one above it: plain; + the light's direction, colour and coefficients; + the
textured tabletop; + the floor (textured); + shadows (= kit); + the arm's own meshes (where ../shared/reference holds
Trossen's description; not shipped). The arm is posed at a few configurations.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from app.config.loader import load_run_config
from app.episode.replica import PosedReplica
from app.sim.cameras import SceneCameras
from app.specs import CameraStream

CAMERAS = [CameraStream("cam_high", eye=(-0.15, 0.0, 0.75), target=(0.35, 0.0, 0.0)),
           CameraStream("cam_side", eye=(1.0, -0.9, 0.7), target=(0.3, 0.0, 0.05))]
LIGHT = {"light_direction": [0.35, -0.25, 1.0], "light_color": [1.0, 0.97, 0.92], "ambient": 0.62, "diffuse": 0.45,
         "specular": 0.08}
STEPS = [
    ("plain", {"style": "plain"}),
    ("+ light (direction, colour, coefficients)", {"style": "plain", **LIGHT}),
    ("+ maple tabletop texture", {"style": "plain", **LIGHT, "table_texture": "maple"}),
    ("+ floor (concrete texture)", {"style": "plain", **LIGHT, "table_texture": "maple", "floor": True,
                                    "floor_texture": "concrete"}),
    ("+ shadows (= kit)", {"style": "kit"}),
]
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"  # Trossen's description, where present
MESHES = ("+ the arm's own meshes (Trossen's wxai_base.urdf)",
          {"style": "kit", "robot_urdf": str(REFERENCE / "trossen_arm_description/urdf/wxai_base.urdf"),
           "robot_package_dirs": [str(REFERENCE)]})


def timed(look: dict, frames: int) -> tuple[float, dict]:
    """Median ms of one 640x480 frame per camera in ``look``, and the last pictures."""
    run = load_run_config("configs/pick_place.yaml", {"scene_overrides.look": look}, n_envs=1)
    replica = PosedReplica(run, 1)
    try:
        cams = SceneCameras(replica.scene, replica.robot, CAMERAS)
        q0 = np.asarray(replica.robot.read_states()[0]).reshape(-1)
        times, images = [], {}
        for k in range(frames):
            q = q0.copy()
            q[:3] += 0.15 * np.sin([k, k + 1, k + 2])
            replica.pose(q[None], None)
            poses = cams.poses(q)
            for c in CAMERAS:
                t0 = time.perf_counter()
                images[c.name] = cams.render(poses, 0, [c.name])[c.name]
                times.append(time.perf_counter() - t0)
        return 1e3 * statistics.median(times), images
    finally:
        replica.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=15)
    p.add_argument("--png", type=Path, default=Path("look.png"))
    args = p.parse_args()
    shown, before = {}, None
    print(f"{'look':50s} {'ms/frame':>9s} {'added':>7s}")
    steps = STEPS + ([MESHES] if (REFERENCE / "trossen_arm_description").is_dir() else [])
    for label, look in steps:
        ms, images = timed(look, args.frames)
        print(f"{label:50s} {ms:9.1f} {'' if before is None else f'{ms - before:+7.1f}'}")
        before = ms
        shown[label] = images
    labels = [STEPS[0][0], STEPS[-1][0]] + ([MESHES[0]] if MESHES[0] in shown else [])
    rows = [np.concatenate([shown[label][c.name] for c in CAMERAS], axis=1) for label in labels]
    imageio.imwrite(args.png, np.concatenate(rows, axis=0))
    print(f"wrote {args.png}: rows plain, kit{', kit with the arm meshes' if len(rows) > 2 else ''}; columns "
          "cam_high and a side view")


if __name__ == "__main__":
    main()
