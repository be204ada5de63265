"""The robot a look draws (``look.robot_urdf``): the run as a picture-only replica builds it, the scene's robot
swapped for the same robot described with its own meshes (a ROS description the user has). Physics, IK and the
recorded joints stay the scene robot's; the replica is posed by joint vector, so the two descriptions must have the
same movable joints in the same order (checked as the config loads, app.config.loader.validate)."""

from __future__ import annotations

import dataclasses

from app.config.robots import robot_model
from app.config.schema import RunConfig
from app.errors import AppError, ConfigError
from app.kinematics.model import KinematicModel
from app.kinematics.urdf import read_robot

MESH_RGB = (0.16, 0.16, 0.17)  # the WidowX AI's black, where the look gives no robot_rgb


def drawn_robot_run(run: RunConfig) -> RunConfig:
    """``run`` with the look's robot (when it names one) as its scene's robot; ConfigError when it cannot stand in
    for the scene's (a rig, or other joints)."""
    scene, look = run.scene_config, run.scene_config.look
    if look.robot_urdf is None:
        return run
    where = f"{run.scene}: look.robot_urdf"
    if scene.robots:
        raise ConfigError(f"{where}: draws one robot; this scene has a rig of {len(scene.robots)} robots")
    try:
        description = read_robot(look.robot_urdf, look.robot_package_dirs, None)
    except AppError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    drawn, own = KinematicModel(description.spec).dof_names, robot_model(scene).dof_names
    if tuple(drawn) != tuple(own):
        raise ConfigError(f"{where}: its movable joints {list(drawn)} must be the scene robot's {list(own)}, in order")
    robot = dataclasses.replace(scene.robot, urdf=look.robot_urdf, package_dirs=look.robot_package_dirs)
    look = look if look.robot_rgb is not None else dataclasses.replace(look, robot_rgb=MESH_RGB)
    return dataclasses.replace(run, scene_config=dataclasses.replace(scene, robot=robot, description=description,
                                                                     look=look))
