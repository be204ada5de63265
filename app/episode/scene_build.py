"""A Scene (and its robot) from a validated run config."""

from __future__ import annotations

import dataclasses

import numpy as np

from app.config.robots import rig_grippers, rig_parts
from app.config.schema import RunConfig
from app.episode.motion_factory import object_starts
from app.sim.robot import Robot
from app.sim.scene import Scene, grid_origins
from app.specs import GripperSpec


def build_scene(run: RunConfig, gui: bool = False, envs: np.ndarray | None = None) -> tuple[Scene, Robot]:
    """Scene with the run's robot, table, floor and obstacles, built for ``run.n_envs`` environments, or only for
    ``envs`` (indices; one worker's share) at the places they have in the whole grid. Objects start where
    app.episode.feedback.object_starts draws them; a gripper takes its finger joints from the arm's controllers."""
    cfg = run.scene_config
    scene = Scene(gui=gui, dt=1.0 / cfg.physics_hz, gravity=cfg.gravity, solver_iterations=cfg.solver_iterations,
                  cone_friction=cfg.cone_friction)
    try:
        if cfg.robots:  # the description the loader read and parsed (scene_config.description), used as it is
            robot = scene.add_robots(rig_parts(cfg), cfg.robot.base_pos, cfg.robot.base_quat,
                                     description=cfg.description)
        else:
            robot = scene.add_robot(cfg.robot.urdf, cfg.robot.base_pos, cfg.robot.base_quat, cfg.robot.package_dirs,
                                    cfg.robot.xacro_args, description=cfg.description)
        if len(cfg.robot.arms or {}) > 1:
            robot.collide_arms(list(cfg.robot.arms.values()))
        for box in (cfg.floor, cfg.table, *cfg.obstacles):
            if box is not None:
                scene.add_box(box)
        for obj in cfg.objects:
            scene.add_object(obj)
        if envs is None:
            scene.build(n_envs=run.n_envs, env_spacing=run.env_spacing, max_envs=run.max_envs)
        else:
            origins = grid_origins(run.n_envs or 1, run.env_spacing)[np.asarray(envs, dtype=int)]
            scene.build(n_envs=len(origins), env_spacing=run.env_spacing, env_origins=origins, max_envs=run.max_envs)
        _place_objects(run, scene, envs)
        if cfg.robot.gripper is not None:
            robot.attach_gripper(_on_link(cfg.robot.gripper, cfg.robot.ee_link))
        for arm, spec in rig_grippers(cfg).items():
            robot.attach_gripper(_on_link(spec, cfg.robot.arms[arm]), arm)
        if cfg.robot.init_qpos is not None:
            q0 = np.broadcast_to(np.array(cfg.robot.init_qpos), (robot.n_envs, robot.n_dofs))
            robot.set_qpos(robot.unbatch(q0))
            robot.initial_qpos = robot.read_states()[0]
    except BaseException:
        scene.close()
        raise
    return scene, robot


def _on_link(spec: GripperSpec, ee_link: str) -> GripperSpec:
    """The gripper with its end-effector link: the one it names, else the robot's (or its arm's)."""
    return spec if spec.ee_link is not None else dataclasses.replace(spec, ee_link=ee_link)


def _place_objects(run: RunConfig, scene: Scene, envs: np.ndarray | None) -> None:
    """Every object at its drawn start pose (the draws of all environments, sliced to ``envs``)."""
    if not scene.objects:
        return
    idx = slice(None) if envs is None else np.asarray(envs, dtype=int)
    for name, (pos, quat) in object_starts(run, run.n_envs or 1).items():
        obj = scene.objects[name]
        obj.set_pose(obj.envs(None).out(pos[idx]), obj.envs(None).out(quat[idx]))
