"""A Scene (and its robot) from a validated run config: the config gathered into one SceneSpec (robot or rig,
boxes, objects with the starts drawn from the seed, grippers, layout), which app.sim builds in one pass."""

from __future__ import annotations

import dataclasses

import numpy as np

from app.config.schema import RunConfig, SceneConfig
from app.errors import ConfigError
from app.episode.motion_factory import object_starts
from app.sim.robot import Robot
from app.sim.scene import Scene, grid_origins
from app.sim.scene_from_spec import build_from_spec
from app.specs import BoxSpec, GripperSpec
from app.specs.look_spec import FLOOR_DROP, FLOOR_NAME
from app.specs.scene_spec import RobotPlacement, SceneSpec


def build_scene(run: RunConfig, gui: bool = False, envs: np.ndarray | None = None) -> tuple[Scene, Robot]:
    """Scene with the run's robot, table, floor and obstacles, built for ``run.n_envs`` environments, or only for
    ``envs`` (indices; one worker's share) at the places they have in the whole grid. Objects start where
    app.episode.motion_factory.object_starts draws them; a gripper takes its finger joints from the arm's
    controllers."""
    spec = scene_spec(run, envs)
    return build_from_spec(spec, gui)


def scene_spec(run: RunConfig, envs: np.ndarray | None = None) -> SceneSpec:
    """The run's scene as data (see :func:`build_scene`)."""
    cfg = run.scene_config
    r = cfg.robot
    if cfg.robots and cfg.description is None:
        raise ConfigError(f"{run.scene}: a rig is built from its description as the loader composes it "
                          "(app.config.loader.load_run_config)")
    robot = RobotPlacement(r.urdf, r.base_pos, r.base_quat, r.package_dirs, r.xacro_args, cfg.description,
                           tuple((r.arms or {}).values()), r.init_qpos)
    grippers = tuple((arm, _on_link(spec, r.arms[arm] if arm else r.ee_link)) for arm, spec in r.grippers_by_arm.items())
    idx = slice(None) if envs is None else np.asarray(envs, dtype=int)  # the draws of all environments, sliced
    starts = {name: (pos[idx], quat[idx]) for name, (pos, quat) in object_starts(run, run.n_envs or 1).items()}
    layout = dict(n_envs=run.n_envs) if envs is None else dict(
        n_envs=len(idx), env_origins=grid_origins(run.n_envs or 1, run.env_spacing)[idx])
    floor = cfg.floor or look_floor(cfg)
    return SceneSpec(robot, 1.0 / cfg.physics_hz, cfg.gravity, cfg.solver_iterations, cfg.cone_friction,
                     tuple(b for b in (floor, cfg.table, *cfg.obstacles) if b is not None), cfg.objects, starts,
                     grippers, env_spacing=run.env_spacing, max_envs=run.max_envs, look=cfg.look,
                     textured={"table": cfg.table and cfg.table.name, "floor": floor and floor.name}, **layout)


def look_floor(cfg: SceneConfig) -> BoxSpec | None:
    """The floor the scene's look adds (seen, never touched) FLOOR_DROP below a table where the scene has none."""
    if not cfg.look.resolved().floor or cfg.table is None:
        return None
    t = cfg.table
    return BoxSpec(FLOOR_NAME, (3.0, 3.0, 0.02), (t.pos[0], t.pos[1], t.top() - FLOOR_DROP - 0.01),
                   rgba=(0.62, 0.62, 0.6, 1.0), collision=False)


def _on_link(spec: GripperSpec, ee_link: str) -> GripperSpec:
    """The gripper with its end-effector link: the one it names, else the robot's (or its arm's)."""
    return spec if spec.ee_link is not None else dataclasses.replace(spec, ee_link=ee_link)
