"""The Trossen kits' cameras for a recording (``app.record --cameras kit``, the default): ``cam_high`` and ``cam_low``
fixed over the workspace and a wrist camera on each WidowX AI arm, 640 x 480 at 30 fps, for a scene that names no
cameras of its own (a scene that does, e.g. the Stationary AI's, keeps its own: its description places them).

Placement, learned from Trossen's kits (their MuJoCo models of the Stationary AI and the WidowX AI follower, and the
official ``wxai_follower.urdf``):

- The wrist camera is the D405 on the follower's camera mount: its colour optical frame sits 0.0587 m ahead of
  ``link_6``, 0.009 m to its side and 0.0543 m above it, looking along the gripper tilted 20 deg down (the mount's
  pitch): WRIST_OFFSET_POS / WRIST_OFFSET_QUAT, given from the end-effector link ``ee_gripper_link`` (0.156062 m
  ahead of ``link_6``, same axes), which the app's WidowX AI description and the official ones share.
- The Stationary AI's ``cam_high`` looks at the middle of its workspace from about 1 m above the tabletop, 65 deg
  down; its ``cam_low`` from just above the tabletop, level, about 0.5 m away. The solo arm has no frame to carry
  them: here both stand across the workspace from the arm (facing it, so the gripper does not hide the object from
  ``cam_high`` as a camera behind the arm does), at those heights, pitch and distances.
- Every camera has the D405's vertical field of view, 58 deg (Trossen's MuJoCo model widens cam_high and cam_low to
  65 and 125 deg: a real D405 cannot).

``--camera-size WxH`` records every camera at a smaller size for speed: rendered at that size (a smaller render
then upscaled would not be the picture a camera of that size takes), the intrinsics in ``meta/cameras.json`` follow.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from app.config.schema import RunConfig, SceneConfig
from app.errors import InputError
from app.specs import CameraStream

KIT_SIZE = (640, 480)  # [px] the kits' cameras
KIT_FPS = 30.0
D405_VFOV = 58.0  # [deg] the D405's vertical field of view
WRIST_OFFSET_POS = (-0.09741, 0.009, 0.05427)  # [m] the wrist camera's optical frame from ee_gripper_link
WRIST_OFFSET_QUAT = (0.40558, -0.57923, 0.57923, -0.40558)  # (w, x, y, z): z along the gripper, 20 deg down
WRIST_EE = "ee_gripper_link"  # the WidowX AI's end-effector link, whose wrist carries the camera
HIGH_HEIGHT, HIGH_PITCH_DEG = 1.0, 65.0  # [m] above the tabletop, [deg] below the horizon
LOW_HEIGHT, LOW_DISTANCE = 0.06, 0.45  # [m] above the tabletop, [m] from the workspace's middle
MODES = ("kit", "config", "none")


def workspace(scene: SceneConfig) -> tuple[np.ndarray, float]:
    """The middle of the workspace on the tabletop (3,) [m] and the tabletop's height [m]: over the objects' start
    ranges (or starts), else 0.35 m ahead of the robot's base."""
    top = scene.table.top() if scene.table is not None else 0.0
    starts = [np.mean(o.pos_range, axis=0) if o.pos_range is not None else np.asarray(o.pos) for o in scene.objects]
    if starts:
        middle = np.mean(starts, axis=0)
    else:
        yaw = 2 * math.atan2(scene.robot.base_quat[3], scene.robot.base_quat[0])
        middle = np.asarray(scene.robot.base_pos) + 0.35 * np.array([math.cos(yaw), math.sin(yaw), 0.0])
    return np.array([middle[0], middle[1], top]), top


def _facing(scene: SceneConfig, middle: np.ndarray) -> np.ndarray:
    """The horizontal unit vector from the robot's base to the workspace's middle (the cameras stand beyond)."""
    d = middle[:2] - np.asarray(scene.robot.base_pos[:2], dtype=float)
    return np.append(d / np.linalg.norm(d), 0.0) if np.linalg.norm(d) > 1e-6 else np.array([1.0, 0.0, 0.0])


def kit_cameras(scene: SceneConfig) -> tuple[CameraStream, ...]:
    """cam_high, cam_low and a wrist camera per WidowX AI arm (``cam_wrist``; ``cam_<arm>_wrist`` on a rig) for
    ``scene`` (see the module docstring)."""
    middle, top = workspace(scene)
    ahead = _facing(scene, middle)
    w, h = KIT_SIZE
    high_eye = middle + ahead * HIGH_HEIGHT / math.tan(math.radians(HIGH_PITCH_DEG)) + [0, 0, HIGH_HEIGHT]
    low_eye = middle + ahead * LOW_DISTANCE + [0, 0, LOW_HEIGHT]
    fixed = dict(fov=D405_VFOV, width=w, height=h, fps=KIT_FPS)
    cameras = [CameraStream("cam_high", eye=tuple(high_eye), target=tuple(middle), **fixed),
               CameraStream("cam_low", eye=tuple(low_eye), target=tuple(middle + [0, 0, LOW_HEIGHT]), **fixed)]
    arms = scene.robot.arms or {"": scene.robot.ee_link}
    for arm, link in arms.items():
        if link.endswith(WRIST_EE):
            cameras.append(CameraStream(f"cam_{arm}_wrist" if arm else "cam_wrist", link=link,
                                        offset_pos=WRIST_OFFSET_POS, offset_quat=WRIST_OFFSET_QUAT, **fixed))
    return tuple(cameras)


def parse_size(text: str) -> tuple[int, int]:
    """'WxH' -> (W, H) [px], each even and 16..4096 (a camera's own bounds); InputError otherwise."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InputError(f"--camera-size must be WIDTHxHEIGHT in pixels, e.g. 320x240, got {text!r}") from None
    if not all(16 <= v <= 4096 and v % 2 == 0 for v in (w, h)):
        raise InputError(f"--camera-size {text}: width and height must be even, 16..4096 px")
    return w, h


def recording_cameras(run: RunConfig, mode: str, size: tuple[int, int] | None = None,
                      depth: bool = False) -> RunConfig:
    """``run`` with the cameras a recording takes: ``kit`` the scene's named cameras, or the kit's where it names
    none; ``config`` the scene's only; ``none`` no camera. ``size`` (W, H) [px]: every camera at that size;
    ``depth``: every camera records its depth too."""
    if mode not in MODES:
        raise InputError(f"--cameras must be one of {list(MODES)}, got {mode!r}")
    scene = run.scene_config
    cameras = () if mode == "none" else scene.cameras or (kit_cameras(scene) if mode == "kit" else ())
    if not cameras and (size is not None or depth):
        why = "with --cameras none" if mode == "none" else "with --cameras config (the config names none)"
        raise InputError(f"{'--depth' if depth else '--camera-size'} asks for cameras, but {why} no camera records: "
                         "drop it, or record the kit's cameras (--cameras kit)")
    if size is not None:
        cameras = tuple(dataclasses.replace(c, width=size[0], height=size[1]) for c in cameras)
    if depth:
        cameras = tuple(dataclasses.replace(c, depth=True) for c in cameras)
    return dataclasses.replace(run, scene_config=dataclasses.replace(scene, cameras=cameras))
