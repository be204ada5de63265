"""The robot a look draws (``look.robot_urdf``): the run as a picture-only replica builds it, the scene's robot
swapped for the same robot described with its own meshes (a ROS description the user has). Physics, IK and the
recorded joints stay the scene robot's; the replica is posed by joint vector, so the two descriptions must have the
same movable joints in the same order: checked, and the description read, once as the config loads
(:func:`load_drawn`); app.episode.replica only swaps in what was read."""

from __future__ import annotations

import dataclasses

from app.config.robots import robot_model
from app.config.scene_sections import SceneConfig
from app.errors import AppError, ConfigError
from app.kinematics.model import KinematicModel
from app.kinematics.urdf import read_robot


def load_drawn(scene: SceneConfig, where: str) -> SceneConfig:
    """``scene`` with the look's robot (when it names one) read into ``scene.drawn``; ConfigError at ``where``
    (the scene file) when it cannot stand in for the scene's robot (a rig, or other joints)."""
    look = scene.look
    if look.robot_urdf is None:
        return scene
    where = f"{where}: look.robot_urdf"
    if scene.robots:
        raise ConfigError(f"{where}: draws one robot; this scene has a rig of {len(scene.robots)} robots")
    try:
        description = read_robot(look.robot_urdf, look.robot_package_dirs, None)
    except AppError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    drawn, own = KinematicModel(description.spec).dof_names, robot_model(scene).dof_names
    if tuple(drawn) != tuple(own):
        raise ConfigError(f"{where}: its movable joints {list(drawn)} must be the scene robot's {list(own)}, in order")
    return dataclasses.replace(scene, drawn=description)

