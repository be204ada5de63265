"""The simulated side of app.envs: one PyBullet world of a run config with ``num_envs`` environments, reset one
environment at a time, advanced one environment step (``substeps`` physics steps) at a time with every arm's
joint goals or end-effector targets and every gripper's command.

Joint goals go through app.control.joint_step every physics step (velocity and acceleration bounds, limits
kept: at the control rate a motor braking at a limit overshot it by 1e-4 rad); end-effector
targets go to the run's own controller (``ik`` or ``qp``), interpolated over the step from the previous one, so a
policy's waypoints arrive as a moving target. The grippers are commanded by closing fraction (0 open .. 1
closed) every control tick, as in ``app.run``.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from app.config.schema import RunConfig
from app.control.controller_base import ACCEL_MAX
from app.control.joint_step import JointStep
from app.control.motion_protocol import Targets
from app.envs.layout import StateLayout
from app.episode.arms_feedback import ArmsFeedback
from app.episode.episode_scene import EpisodeScene
from app.episode.feedback import Feedback
from app.episode.loop import make_controller
from app.episode.replica import headless
from app.episode.run_report import task_links
from app.episode.scene_build import build_scene
from app.errors import InputError
from app.ik.limits.distance import GraspState
from app.tasks import object_task
from app.validation import unit_quaternions

BRAKING = 0.5  # of the controller's acceleration bound, for joint actions: the motors lag a velocity command by
# a physics step, and braking at the full bound took a wrist joint 3e-5 rad past its limit (tests/test_envs.py)
AWAY = 50.0  # [m] above its place: where a reset object waits while its old contacts are dropped


class Command(NamedTuple):
    """What one environment step asks of every environment: ``q_goal`` (n_envs, n_dofs) joint goals, or
    ``pos``/``quat`` (n_envs, n_arms, 3 | 4) end-effector targets (environment frames, wxyz) in the layout's
    arm order; ``closing`` (n_envs, n_arms) each gripper's command in [0, 1]."""

    closing: np.ndarray
    q_goal: np.ndarray | None = None
    pos: np.ndarray | None = None
    quat: np.ndarray | None = None


class EnvWorld:
    """The world of ``run`` with ``num_envs`` environments, stepped ``fps`` times a simulated second."""

    def __init__(self, run: RunConfig, num_envs: int, fps: int):
        self.run = run = dataclasses.replace(headless(run), n_envs=num_envs)
        self.scene, self.robot = build_scene(run)
        physics_hz = run.scene_config.physics_hz
        self.substeps = int(round(physics_hz / fps))
        if self.substeps < 1 or abs(self.substeps * fps - physics_hz) > 1e-6:
            raise InputError(f"fps {fps}: an environment step must be a whole number of physics steps "
                             f"(physics_hz {physics_hz:g}); choose a divisor of it, e.g. 30 or 60")
        self.every = max(1, int(round(physics_hz / (run.controller.control_hz or physics_hz))))
        self.dt, self.tick_dt, self.physics_dt = 1.0 / fps, self.every / physics_hz, 1.0 / physics_hz
        self.layout = StateLayout.of(self.robot, run)
        self.q0 = self.robot.read_states()[0][0].copy()
        self.t = 0.0
        self._controller, self._joint_step = None, None
        self._last = None  # the previous step's end-effector targets (n_envs, n_arms, 7)
        self.observer = _observer(self.scene, self.robot, run, self.layout)
        self._seen: dict | None = None  # the observations of the state as it is now (None: not looked at yet)
        self.object_name = self.observer.obj.name if self.observer is not None else None

    # ------------------------------------------------------------------ reset
    def reset_envs(self, envs: np.ndarray, scenes: list[EpisodeScene]) -> None:
        """Environments ``envs`` back to the start: the robot at its initial joints, at rest, the grippers open,
        each object where its EpisodeScene puts it."""
        envs = np.asarray(envs, dtype=int)
        self._seen = None
        q0 = np.tile(self.q0, (len(envs), 1))
        self.robot.teleport(q0, np.zeros_like(q0), envs)
        if self._controller is not None:  # its last answers and command are of the episode before
            self._controller.reset(envs)
        poses = {name: (np.stack([s.objects[name][0] for s in scenes]), np.stack([s.objects[name][1] for s in scenes]))
                 for name in self.scene.objects}
        if poses:  # away from everything first: their old contacts (and the solver's warm start) are dropped
            for k, (name, obj) in enumerate(self.scene.objects.items()):
                obj.set_pose(poses[name][0] + [0.0, 0.0, AWAY + k], poses[name][1], envs_idx=envs)
            self.scene.detect_contacts()
        for name, obj in self.scene.objects.items():
            obj.set_pose(*poses[name], envs_idx=envs)
        if self._last is not None:
            self._last[envs] = self.ee_now()[envs]

    # ------------------------------------------------------------------ step
    def advance(self, command: Command) -> None:
        """One environment step: every control tick the grippers and arms commanded, then physics."""
        q, v = self.robot.read_states()
        if command.pos is not None:
            start = self.ee_now() if self._last is None else self._last
            goal = np.concatenate([command.pos, command.quat], axis=2)
        for k in range(self.substeps):
            if k % self.every == 0:
                self._grippers(command.closing, q)
                if command.q_goal is None:
                    self._track(start, goal, (k + self.every) / self.substeps)
            if command.q_goal is not None:  # every physics step: the motors brake before a limit, not past it
                self._joints(q, v, command.q_goal)
            self.scene.step()
            self._seen = None
            q, v = self.robot.read_states()
            self.t += self.physics_dt
        if command.pos is not None:
            self._last = goal

    def _grippers(self, closing: np.ndarray, q: np.ndarray) -> None:
        for a, gripper in enumerate(self.layout.grippers):
            gripper.command(closing[:, a], q, self.tick_dt)

    def _joints(self, q: np.ndarray, v: np.ndarray, q_goal: np.ndarray) -> None:
        if self._joint_step is None:
            self._joint_step = JointStep(self.robot.model, self.run.controller.accel_max or ACCEL_MAX, BRAKING)
        q_cmd, qdot = self._joint_step(q, v, q_goal, self.physics_dt)
        self.robot.command(q_cmd, qdot, position_gain=0.0)

    def _track(self, start: np.ndarray, goal: np.ndarray, s: float) -> None:
        """The controller towards the targets a fraction ``s`` (0..1] of the way from ``start`` to ``goal`` (n_envs,
        n_arms, 7), moving at the step's pace."""
        s = min(s, 1.0)
        pos = start[..., :3] + s * (goal[..., :3] - start[..., :3])
        q_goal = np.where((np.sum(start[..., 3:] * goal[..., 3:], axis=-1) < 0)[..., None], -goal[..., 3:],
                          goal[..., 3:])
        quat = start[..., 3:] + s * (q_goal - start[..., 3:])
        quat = unit_quaternions(quat)
        vel = (goal[..., :3] - start[..., :3]) / self.dt
        order = self.layout.target_order
        self.controller.track(self.t, Targets(pos[:, order], quat[:, order], vel[:, order]), self._grasp())

    def _grasp(self) -> GraspState:
        """The object's rows with every finger unwatched (a policy's fingers may touch it), carried by the arm
        whose fingers all touch it."""
        n = self.robot.n_envs
        if self.object_name is None:
            return GraspState.nothing(n)
        return GraspState.of_object(self.object_name, np.ones(n, bool), self.holders())

    # ------------------------------------------------------------------ what is seen
    @property
    def controller(self):
        """The run's controller (made on the first end-effector step), ticking every ``tick_dt`` seconds."""
        if self._controller is None:
            self._controller = make_controller(self.run, self.robot, self.tick_dt)
        return self._controller

    def observations(self) -> dict:
        """The observer's Observation per layout arm (arm -> Observation); {} without an object. Looked at once
        per state (a step or a reset makes a new one): the judge, a policy and the collision rows' grasp share it."""
        if self.observer is None:
            return {}
        if self._seen is None:
            obs = self.observer.observe(self.robot.read_states()[0])
            self._seen = obs if isinstance(obs, dict) else {self.layout.arms[0]: obs}
        return self._seen

    def holders(self, observations: dict | None = None) -> list[str | None]:
        """Per environment the key in ``robot.grippers`` of the gripper whose fingers all touch the object (the
        first arm's where both do), None for none."""
        obs = self.observations() if observations is None else observations
        out: list[str | None] = [None] * self.robot.n_envs
        for arm, key in zip(self.layout.arms, self.layout.gripper_keys):
            for e in np.flatnonzero(obs[arm].contact.all(axis=1)) if arm in obs else ():
                out[e] = key if out[e] is None else out[e]
        return out

    def ee_now(self) -> np.ndarray:
        """Every arm's end-effector pose now (n_envs, n_arms, 7: position [m], quat wxyz, environment frames)."""
        pos, quat = self.layout.ee_poses(self.robot.read_states()[0])
        return np.concatenate([pos, quat], axis=2)

    def controller_telemetry_clear(self) -> None:
        """Forget the controller's telemetry rows (read each step; an environment may run without end)."""
        if self._controller is not None:
            self._controller.telemetry.clear()

    def close(self) -> None:
        self.scene.close()


def _observer(scene, robot, run: RunConfig, layout: StateLayout):
    """What observes the task's object: Feedback (one gripper), ArmsFeedback (two arms), None (no object)."""
    if object_task(run.motion) is None or not layout.grippers:
        return None
    name = run.motion.object
    probe = SimpleNamespace(object_name=name, arms=tuple(layout.arms), arm_objects=run.motion.arm_objects())
    if len(layout.arms) == 1:
        return Feedback(scene, robot, probe, task_links(run)[0])
    return ArmsFeedback(scene, robot, probe, run.scene_config.robot.arms)
