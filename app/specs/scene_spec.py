"""A whole scene as data: physics, one robot (or a rig of several), boxes, objects with their start poses, grippers
and the environments' layout; what app.sim.scene_from_spec builds in one pass (app.episode.scene_build makes it
from a run config)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.specs.box_spec import BoxSpec
from app.specs.gripper_spec import GripperSpec
from app.specs.look_spec import LookSpec
from app.specs.object_spec import ObjectSpec

WIDOWX_AI_URDF = str(Path(__file__).resolve().parents[2] / "assets" / "urdf" / "widowx_ai.urdf")  # the default robot,
# found from any working directory


@dataclass(frozen=True)
class RobotPlacement:
    """The robot: a description file (``urdf``, ROS ``package_dirs``, ``xacro_args``), its base pose in each
    environment's frame (pos [m], quat wxyz), the description already read and parsed
    (app.kinematics.urdf.RobotDescription; None: read here from ``urdf``; a rig of several robots comes composed
    into one, ``urdf`` then only names it), the end effectors of its several arms (kept from touching each other
    physically), its start joints."""

    urdf: str = WIDOWX_AI_URDF
    base_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    package_dirs: tuple[str, ...] = ()
    xacro_args: dict | None = None
    description: object = None
    arm_links: tuple[str, ...] = ()
    init_qpos: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SceneSpec:
    """Everything a Scene is built from. Physics: ``dt`` [s], ``gravity`` (3,) [m/s^2], PyBullet's
    ``solver_iterations`` (None: its 50) and friction cone. ``grippers``: (arm name, '' for the robot's one;
    spec with its ``ee_link`` set). ``object_starts``: name -> (pos (n_envs, 3) [m], quat (n_envs, 4) wxyz) in each
    environment's frame (objects without one start at their spec's pose). Layout: ``n_envs`` (None: one,
    unbatched) on a grid ``env_spacing`` [m] apart, or at the world points ``env_origins`` (n_envs, 3). ``look``: how
    pictures look (app.sim.look), ``textured`` the boxes its textures go on."""

    robot: RobotPlacement = field(default_factory=RobotPlacement)
    dt: float = 1.0 / 240.0
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    solver_iterations: int | None = None
    cone_friction: bool = True
    boxes: tuple[BoxSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    object_starts: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    grippers: tuple[tuple[str, GripperSpec], ...] = ()
    n_envs: int | None = None
    env_spacing: tuple[float, float] = (1.0, 1.0)
    env_origins: np.ndarray | None = None
    max_envs: int = 1024
    look: LookSpec = field(default_factory=LookSpec)
    textured: dict[str, str | None] = field(default_factory=dict)  # 'table'/'floor' -> the box the look textures
