"""A Scene (and its robot) from a validated run config."""

from __future__ import annotations

import numpy as np

from app.config.schema import BoxSection, RunConfig
from app.sim.robot import Robot
from app.sim.scene import BoxSpec, Scene


def _box(section: BoxSection) -> BoxSpec:
    return BoxSpec(section.name, section.size, section.pos, rgba=section.rgba)


def build_scene(run: RunConfig, gui: bool = False) -> tuple[Scene, Robot]:
    """Scene with the run's robot, table, floor and obstacles, built for ``run.n_envs``."""
    cfg = run.scene_config
    scene = Scene(gui=gui, dt=1.0 / cfg.physics_hz, gravity=cfg.gravity)
    try:
        robot = scene.add_robot(cfg.robot.urdf, cfg.robot.base_pos, cfg.robot.base_quat, cfg.robot.package_dirs,
                                cfg.robot.xacro_args)
        for section in (cfg.floor, cfg.table, *cfg.obstacles):
            if section is not None:
                scene.add_box(_box(section))
        scene.build(n_envs=run.n_envs, env_spacing=run.env_spacing)
        if cfg.robot.init_qpos is not None:
            q0 = np.broadcast_to(np.array(cfg.robot.init_qpos), (robot.n_envs, robot.n_dofs))
            robot.set_qpos(robot.unbatch(q0))
            robot.initial_qpos = robot.read_states()[0]
    except BaseException:
        scene.close()
        raise
    return scene, robot
