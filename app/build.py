"""A Scene (and its robot) from a validated run config."""

from __future__ import annotations

import numpy as np

from app.config.schema import BoxSection, RunConfig
from app.sim.robot import Robot
from app.sim.scene import BoxSpec, Scene, grid_origins


def _box(section: BoxSection) -> BoxSpec:
    return BoxSpec(section.name, section.size, section.pos, rgba=section.rgba)


def build_scene(run: RunConfig, gui: bool = False, envs: np.ndarray | None = None) -> tuple[Scene, Robot]:
    """Scene with the run's robot, table, floor and obstacles, built for ``run.n_envs`` environments, or only for
    ``envs`` (indices; one worker's share) at the places they have in the whole grid."""
    cfg = run.scene_config
    scene = Scene(gui=gui, dt=1.0 / cfg.physics_hz, gravity=cfg.gravity)
    try:
        robot = scene.add_robot(cfg.robot.urdf, cfg.robot.base_pos, cfg.robot.base_quat, cfg.robot.package_dirs,
                                cfg.robot.xacro_args)
        for section in (cfg.floor, cfg.table, *cfg.obstacles):
            if section is not None:
                scene.add_box(_box(section))
        if envs is None:
            scene.build(n_envs=run.n_envs, env_spacing=run.env_spacing, max_envs=run.max_envs)
        else:
            origins = grid_origins(run.n_envs or 1, run.env_spacing)[np.asarray(envs, dtype=int)]
            scene.build(n_envs=len(origins), env_spacing=run.env_spacing, env_origins=origins, max_envs=run.max_envs)
        if cfg.robot.init_qpos is not None:
            q0 = np.broadcast_to(np.array(cfg.robot.init_qpos), (robot.n_envs, robot.n_dofs))
            robot.set_qpos(robot.unbatch(q0))
            robot.initial_qpos = robot.read_states()[0]
    except BaseException:
        scene.close()
        raise
    return scene, robot
