"""Run-level motions: what the end effector (or fingertips) should do over time (the YAML `task:`), one frozen
dataclass per motion type (named *Motion; QP objectives in app.ik.tasks keep "Task"), and the target
generator that turns one into targets over time.

Targets are in every environment's own frame, relative to the robot's base position: positions
(n_envs, n_targets, 3) [m], quaternions (n_envs, n_targets, 4) (w, x, y, z) and linear velocities
(n_envs, n_targets, 3) [m/s] for the controllers' feed-forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from app.control.motion_protocol import MotionBase, Targets  # noqa: F401 - Targets: what every motion gives
from app.errors import ConfigError
from app.kinematics.rotations import quat_normalize, quat_to_matrix
from app.validation import Check, CheckContext, Where

Vec3 = tuple[float, float, float]
Mask = tuple[bool, bool, bool]


def arm_link(arm: str | None, robot, key: str) -> str:
    """The end-effector link of the arm named ``arm`` of ``robot`` (a RobotConfig: its ``arms``); ConfigError
    naming ``key`` and the valid arms otherwise."""
    arms = robot.arms or {}
    if arm not in arms:
        valid = sorted(arms) or "none: the scene's robot has no named arms (robot.arms, or robots:)"
        raise ConfigError(f"{key}: unknown arm {arm!r}; valid arms: {valid}")
    return arms[arm]


@dataclass(frozen=True)
class PoseMotion:
    """What every task type has: the target orientation ``quat`` (w, x, y, z) and the IK masks."""

    type: ClassVar[str] = ""
    quat: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 0.0)
    pos_mask: Mask = (True, True, True)
    rot_mask: Mask = (False, False, True)
    arm: str | None = None  # which arm's end effector moves (the scene's robots / robot.arms); None: robot.ee_link

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """What each value must be (rows for app.validation.raise_first); subclasses add theirs to these."""
        return [(at("quat"), any(self.quat), "must be a nonzero (w, x, y, z) quaternion")]

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        """(key path in the run file, link) of every link this motion moves, in target order (``robot``: the
        scene's RobotConfig): the end effector of the arm it names, or the robot's. ConfigError for an unknown
        arm."""
        if self.arm is not None:
            return [(("task", "arm"), arm_link(self.arm, robot, "task.arm"))]
        return [(("robot", "ee_link"), robot.ee_link)]

    def targets(self, n_envs: int, base_pos: np.ndarray, seed: int, envs: np.ndarray | None = None):
        """The run's target source (app.episode.feedback.make_motion): called with the time [s], it gives Targets; it
        has ``n_targets`` and ``feedback`` (False: driven by time alone)."""
        return TargetGenerator(self, n_envs, base_pos, seed, envs=envs)


@dataclass(frozen=True)
class StaticMotion(PoseMotion):
    """Hold ``center`` [m] (relative to the base)."""

    type: ClassVar[str] = "static"
    center: Vec3 = (0.35, 0.0, 0.2)


@dataclass(frozen=True)
class CircleMotion(StaticMotion):
    """Each environment circles ``center`` at ``radius`` [m] with an angular speed drawn from
    ``angular_speed_range`` [rad/s] (per environment, from the run's seed)."""

    type: ClassVar[str] = "circle"
    radius: float = 0.1
    angular_speed_range: tuple[float, float] = (-3.0, 3.0)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        lo, hi = self.angular_speed_range
        return super().checks(at, ctx) + [
            (at("radius"), self.radius >= 0, f"must be >= 0 m, got {self.radius}"),
            (at("angular_speed_range"), lo <= hi, f"needs [low, high] with low <= high [rad/s], got [{lo}, {hi}]")]


@dataclass(frozen=True)
class FingertipsMotion(CircleMotion):
    """The two ``links`` follow targets ``gap`` [m] apart along the target frame's y axis (oscillating by
    ``gap_amplitude``) around a circling centre."""

    type: ClassVar[str] = "fingertips"
    links: tuple[str, ...] = ("left_fingertip", "right_fingertip")
    gap: float = 0.04
    gap_amplitude: float = 0.02

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        return super().checks(at, ctx) + [
            (at("gap"), self.gap >= 0, f"must be >= 0 m, got {self.gap}"),
            (at("gap_amplitude"), self.gap_amplitude >= 0, f"must be >= 0 m, got {self.gap_amplitude}"),
            (at("type"), ctx.scene.robot.gripper is None, "'fingertips' moves the finger joints, which robot.gripper "
                                                          "owns; remove the gripper section or choose another task")]

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        return [(("task", "links", i), link) for i, link in enumerate(self.links)]


@dataclass(frozen=True)
class PathMotion(PoseMotion):
    """Move through ``waypoints`` (relative to the base) at ``speed`` [m/s], looping."""

    type: ClassVar[str] = "path"
    waypoints: tuple[Vec3, ...] = ()
    speed: float = 0.1

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        return super().checks(at, ctx) + [
            (at("waypoints"), len(self.waypoints) >= 2, "a path needs at least 2 waypoints"),
            (at("speed"), self.speed > 0, f"must be > 0 m/s, got {self.speed}")]


ARM_MOTION_TYPES = {cls.type: cls for cls in (CircleMotion, StaticMotion, PathMotion)}  # what an arm of `arms` does


@dataclass(frozen=True)
class ArmsMotion(PoseMotion):
    """Several arms at once, one timed motion each (``motions``, each naming its ``arm``), solved together; the
    masks are this motion's, for every arm. Points are relative to the robot's base (the rig's root)."""

    type: ClassVar[str] = "arms"
    motions: tuple[PoseMotion, ...] = field(default=(), metadata={"types": ARM_MOTION_TYPES, "default_type": "circle"})

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        rows = super().checks(at, ctx) + [(at("motions"), len(self.motions) >= 1, "an arms task needs a motion for "
                                           "each arm it moves (at least one); none would track nothing")]
        for i, motion in enumerate(self.motions):
            rows += motion.checks(at.sub("motions", i), ctx)
        return rows

    def targets(self, n_envs: int, base_pos: np.ndarray, seed: int, envs: np.ndarray | None = None):
        return ArmsTargets(self, n_envs, base_pos, seed, envs=envs)

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        return [(("task", "motions", i, "arm"), arm_link(m.arm, robot, f"task.motions[{i}].arm"))
                for i, m in enumerate(self.motions)]


MOTION_TYPES = {cls.type: cls for cls in (CircleMotion, StaticMotion, FingertipsMotion, PathMotion, ArmsMotion)}
MotionSpec = PoseMotion  # every task type derives from it


class TargetGenerator(MotionBase):
    """Targets of a task for ``n_envs`` environments, each in its own frame.

    Args:
        task: A task dataclass (MOTION_TYPES). n_envs: Number of environments.
        base_pos: Robot base position in the environment frame (the task's points are relative to it).
        seed: Seeds the per-environment angular speeds.
        envs: The environments (indices into ``n_envs``) this generator serves, e.g. one worker's share; the
            draws are those of all ``n_envs`` environments, sliced, so a share answers as the whole run does.
    """

    def __init__(self, task: PoseMotion, n_envs: int, base_pos: np.ndarray, seed: int | tuple[int, ...],
                 envs: np.ndarray | None = None):
        self.task = task
        lo, hi = task.angular_speed_range if isinstance(task, CircleMotion) else (-3.0, 3.0)
        self.omega = np.random.default_rng(seed).uniform(lo, hi, int(n_envs))
        if envs is not None:
            self.omega = self.omega[np.asarray(envs, dtype=int)]
        n = len(self.omega)
        self.origins = np.broadcast_to(np.asarray(base_pos, dtype=float), (n, 3))
        self.quat = quat_normalize(np.array(task.quat))
        self.n_targets = 2 if isinstance(task, FingertipsMotion) else 1
        if isinstance(task, PathMotion):
            pts = np.array(task.waypoints)
            seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
            self._path = (pts, np.concatenate([[0.0], np.cumsum(seg)]))

    def __call__(self, t: float) -> Targets:
        task = self.task
        if isinstance(task, PathMotion):
            pos, vel = self._on_path(t)
        else:
            pos, vel = self._circle(t) if isinstance(task, CircleMotion) else self._static()
        pos = self.origins + pos
        n = len(pos)
        if isinstance(task, FingertipsMotion):
            pos, vel = self._fingertips(t, pos, vel)
        else:
            pos, vel = pos[:, None], vel[:, None]
        quat = np.broadcast_to(self.quat, (n, self.n_targets, 4)).copy()
        return Targets(pos, quat, vel)

    def _static(self):
        n = len(self.origins)
        return np.broadcast_to(np.array(self.task.center), (n, 3)), np.zeros((n, 3))

    def _circle(self, t: float):
        c, r, w = np.array(self.task.center), self.task.radius, self.omega
        a = w * t
        pos = c + r * np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1)
        vel = r * w[:, None] * np.stack([-np.sin(a), np.cos(a), np.zeros_like(a)], axis=1)
        return pos, vel

    def _fingertips(self, t: float, centre: np.ndarray, vel: np.ndarray):
        """Left and right targets on the line of the target frame's y axis, ``gap`` apart."""
        y_axis = quat_to_matrix(self.quat)[:, 1]
        half = 0.5 * (self.task.gap + self.task.gap_amplitude * np.sin(2.0 * t))
        dhalf = 0.5 * self.task.gap_amplitude * 2.0 * np.cos(2.0 * t)
        pos = np.stack([centre + half * y_axis, centre - half * y_axis], axis=1)
        v = np.stack([vel + dhalf * y_axis, vel - dhalf * y_axis], axis=1)
        return pos, v

    def _on_path(self, t: float):
        pts, arc = self._path
        total = arc[-1]
        s = (self.task.speed * t) % total if total > 0 else 0.0
        i = int(np.clip(np.searchsorted(arc, s, side="right") - 1, 0, len(pts) - 2))
        seg = pts[i + 1] - pts[i]
        length = max(arc[i + 1] - arc[i], 1e-12)
        pos = pts[i] + seg * (s - arc[i]) / length
        n = len(self.origins)
        return np.broadcast_to(pos, (n, 3)), np.broadcast_to(seg / length * self.task.speed, (n, 3))


class ArmsTargets(MotionBase):
    """Targets of an :class:`ArmsMotion`: each arm's motion generated as alone (its angular speeds drawn from the
    seed and the arm's place in the list), stacked along the target axis in the order of ``motions``."""

    def __init__(self, task: ArmsMotion, n_envs: int, base_pos: np.ndarray, seed: int, envs: np.ndarray | None = None):
        self.task = task
        self.parts = [TargetGenerator(m, n_envs, base_pos, (seed, i), envs) for i, m in enumerate(task.motions)]
        self.n_targets = sum(p.n_targets for p in self.parts)

    def __call__(self, t: float) -> Targets:
        each = [p(t) for p in self.parts]
        return Targets(*(np.concatenate([getattr(e, k) for e in each], axis=1) for k in ("pos", "quat", "vel")))
