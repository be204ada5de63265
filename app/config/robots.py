"""A scene's robots: ``robots:`` (several, composed into one rig by app.kinematics.compose) or ``robot:``; the
arms a task addresses by name, and the links each task moves."""

from __future__ import annotations

import dataclasses

from app.config.schema import GripperSection, RobotSection, SceneConfig
from app.control.handover import HandoverMotion
from app.control.motions import ArmsMotion, FingertipsMotion
from app.errors import AppError, ConfigError
from app.kinematics.compose import SEPARATOR, RobotPart, check_part_names, compose_urdf
from app.kinematics.model import KinematicModel


def rig_parts(scene: SceneConfig) -> list[RobotPart]:
    """The scene's ``robots`` as parts of one rig (paths already resolved by the loader)."""
    return [RobotPart(r.name, r.urdf, r.base_pos, r.base_quat, r.package_dirs, r.xacro_args) for r in scene.robots]


def robot_model(scene: SceneConfig) -> KinematicModel:
    """The kinematic model of the scene's robot, or of the rig of its robots. Raises AppError subclasses."""
    if scene.robots:
        return KinematicModel.from_urdf_string(compose_urdf(rig_parts(scene)))
    return KinematicModel.from_urdf(scene.robot.urdf, scene.robot.package_dirs, scene.robot.xacro_args)


def resolve_robots(scene: SceneConfig, data: dict, where: str, resolve) -> SceneConfig:
    """``scene`` with its robots' files resolved (``resolve(path) -> Path``) and, for ``robots:``, ``robot`` set to
    the rig: base at the environment's origin, each robot an arm named after it, start poses concatenated."""
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
    rig = RobotSection(name="rig", urdf=f"robots ({', '.join(r.name for r in parts)})",
                       ee_link=f"{parts[0].name}{SEPARATOR}{parts[0].ee_link}",
                       arms={r.name: f"{r.name}{SEPARATOR}{r.ee_link}" for r in parts})
    return dataclasses.replace(scene, robots=tuple(parts), robot=rig)


def rig_grippers(scene: SceneConfig) -> dict[str, GripperSection]:
    """Arm name -> its gripper section with the rig's joint names (NAME/...): the robots of a rig that have one."""
    return {r.name: dataclasses.replace(r.gripper, joints=tuple(f"{r.name}{SEPARATOR}{j}" for j in r.gripper.joints))
            for r in scene.robots if r.gripper is not None}


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


def motion_links(task, robot: RobotSection) -> list[tuple[str, str]]:
    """(key, link) of every link ``task`` moves, in target order: the fingertips' ``links``, the arms of an
    ``arms`` task, the arm a motion names, or the robot's end effector. Raises ConfigError for an unknown arm."""
    if isinstance(task, FingertipsMotion):
        return [(f"task.links[{i}]", link) for i, link in enumerate(task.links)]
    if isinstance(task, ArmsMotion):
        return [(f"task.motions[{i}].arm", arm_link(m.arm, robot, f"task.motions[{i}].arm"))
                for i, m in enumerate(task.motions)]
    if isinstance(task, HandoverMotion):
        return [(f"task.{key}", arm_link(getattr(task, key), robot, f"task.{key}")) for key in ("giver", "taker")]
    if getattr(task, "arm", None) is not None:
        return [("task.arm", arm_link(task.arm, robot, "task.arm"))]
    return [("robot.ee_link", robot.ee_link)]


def arm_link(arm: str | None, robot: RobotSection, key: str) -> str:
    """The end-effector link of the arm named ``arm``."""
    arms = robot.arms or {}
    if arm not in arms:
        valid = sorted(arms) or "none: the scene's robot has no named arms (robot.arms, or robots:)"
        raise ConfigError(f"{key}: unknown arm {arm!r}; valid arms: {valid}")
    return arms[arm]


def check_links(model: KinematicModel, named: list[tuple[str, str]]) -> None:
    """Every (key, link) names a link of ``model``; ConfigError naming the key otherwise."""
    for key, link in named:
        try:
            model.link_index(link)
        except AppError as exc:
            raise ConfigError(f"{key}: {exc}") from None
