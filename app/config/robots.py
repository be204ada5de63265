"""A scene's robots: ``robots:`` (several, composed into one rig by app.kinematics.compose) or ``robot:``; the
arms a task addresses by name, and the links each task moves."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.config.schema import RobotConfig, SceneConfig
from app.control.config_checks import link_checks
from app.errors import AppError, ConfigError
from app.kinematics.compose import SEPARATOR, RobotPart, check_part_names, compose_urdf
from app.kinematics.model import KinematicModel
from app.kinematics.urdf import RobotDescription, parse_urdf_string, read_robot
from app.validation import Where, raise_first


def rig_parts(scene: SceneConfig) -> list[RobotPart]:
    """The scene's ``robots`` as parts of one rig (paths already resolved by the loader)."""
    return [RobotPart(r.name, r.urdf, r.base_pos, r.base_quat, r.package_dirs, r.xacro_args) for r in scene.robots]


def robot_description(scene: SceneConfig) -> RobotDescription:
    """The scene's robot description (its file read, a xacro expanded, or its robots composed into one rig) and
    its parsed tree: what the loader keeps as ``scene.description``. Raises AppError subclasses."""
    if scene.description is not None:
        return scene.description
    if scene.robots:
        text = compose_urdf(rig_parts(scene))
        return RobotDescription(text, parse_urdf_string(text))
    return read_robot(scene.robot.urdf, scene.robot.package_dirs, scene.robot.xacro_args)


def robot_model(scene: SceneConfig) -> KinematicModel:
    """The kinematic model of the scene's robot, or of the rig of its robots (from ``scene.description`` when the
    loader has read it: nothing parsed again). Raises AppError subclasses."""
    return KinematicModel(robot_description(scene).spec)


def load_description(scene: SceneConfig, at: Where) -> SceneConfig:
    """``scene`` with its robot description read and parsed, once; ConfigError naming the key otherwise."""
    if not scene.robots and not Path(scene.robot.urdf).is_file():
        raise ConfigError(f"{at('robot', 'urdf')}: file not found: {scene.robot.urdf}")
    try:
        return dataclasses.replace(scene, description=robot_description(scene))
    except AppError as exc:
        raise ConfigError(f"{at('robots') if scene.robots else at('robot', 'urdf')}: {exc}") from None


def checked_model(scene: SceneConfig, task, scene_at: Where, at: Where) -> KinematicModel:
    """The model of ``scene``'s description, after checking the links the scene and ``task`` name (the robot's
    end effector and arms, the links the task moves) and the start pose; ConfigError naming the key otherwise."""
    model = robot_model(scene)
    named = [] if scene.robots else [(scene_at("robot", "ee_link"), scene.robot.ee_link)]
    named += [(scene_at("robot", "arms", arm), link) for arm, link in (scene.robot.arms or {}).items()
              if not scene.robots]
    try:
        named += [(at(*key), link) for key, link in task.moved_links(scene.robot)]
    except ConfigError as exc:
        raise ConfigError(f"{at.locate(())}{exc}") from None
    raise_first(link_checks(model, named))
    return model


def check_start(scene: SceneConfig, model: KinematicModel, at: Where) -> None:
    """The robot's ``init_qpos`` (a rig's: composed from its robots') fits the model and its joint windows."""
    if scene.robot.init_qpos is None:
        return
    try:
        model.check_window(model.check_q(scene.robot.init_qpos, "init_qpos"), "init_qpos")
    except AppError as exc:
        where = f"{at.locate(('robots',))}[].init_qpos" if scene.robots else at("robot", "init_qpos")
        raise ConfigError(f"{where}: {exc}") from None


def resolve_robots(scene: SceneConfig, data: dict, where: str, resolve) -> SceneConfig:
    """``scene`` with its robots' files resolved (``resolve(path) -> Path``) and, for ``robots:``, ``robot`` set to
    the rig: base at the environment's origin, each robot an arm named after it, start poses concatenated."""
    if "robots" in data and not scene.robots:
        raise ConfigError(f"{where} robots: an empty list; list the robots (each with a name and urdf), or give "
                          "the one robot as robot:")
    if not scene.robots:
        r = scene.robot
        return dataclasses.replace(scene, robot=dataclasses.replace(
            r, urdf=str(resolve(r.urdf)), package_dirs=tuple(str(resolve(d)) for d in r.package_dirs)))
    if "robot" in data:
        raise ConfigError(f"{where} robot, robots: give one of them ('robots' for several, each with a name)")
    problem = check_part_names([r.name for r in scene.robots])
    if problem:
        raise ConfigError(f"{where} robots: {problem}")
    parts = []
    for i, r in enumerate(scene.robots):
        if r.arms is not None:
            raise ConfigError(f"{where} robots[{i}].arms: a robot of a rig is one arm (its ee_link); give a "
                              "description with several arms as the scene's one robot (robot.arms)")
        parts.append(dataclasses.replace(r, urdf=str(resolve(r.urdf)),
                                         package_dirs=tuple(str(resolve(d)) for d in r.package_dirs)))
    rig = RobotConfig(name="rig", urdf=f"robots ({', '.join(r.name for r in parts)})",
                       ee_link=f"{parts[0].name}{SEPARATOR}{parts[0].ee_link}",
                       arms={r.name: f"{r.name}{SEPARATOR}{r.ee_link}" for r in parts},
                       grippers=tuple(dataclasses.replace(r.gripper, arm=r.name, joints=tuple(
                           f"{r.name}{SEPARATOR}{j}" for j in r.gripper.joints)) for r in parts if r.gripper is not None))
    return dataclasses.replace(scene, robots=tuple(parts), robot=rig)


def rig_start(scene: SceneConfig, model: KinematicModel, where: str) -> SceneConfig:
    """The rig's ``init_qpos`` from its robots' (their mid configurations where not given)."""
    if not scene.robots or all(r.init_qpos is None for r in scene.robots):
        return scene
    q = model.mid_config()
    for i, r in enumerate(scene.robots):
        idx = [k for k, n in enumerate(model.dof_names) if n.startswith(r.name + SEPARATOR)]
        if r.init_qpos is None:
            continue
        if len(r.init_qpos) != len(idx):
            raise ConfigError(f"{where} robots[{i}].init_qpos: {len(r.init_qpos)} values for the {len(idx)} DOFs "
                              f"{[model.dof_names[k].split(SEPARATOR, 1)[1] for k in idx]}")
        q[idx] = r.init_qpos
    return dataclasses.replace(scene, robot=dataclasses.replace(scene.robot, init_qpos=tuple(float(x) for x in q)))
