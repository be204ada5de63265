"""docs/architecture.md's "Where things go", done once each in this file: a QP task, a QP limit, a controller and
a run task type (a timed motion) defined here, registered through the public registries only (the controller in
``CONTROLLER_TYPES``, the motion in ``MOTION_TYPES``; the task and the limit by their ``slot``), read by the
config loader (their own value checks, unknown keys refused) and run for 0.2 s in PyBullet."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.control.config_checks import controller_checks
from app.control.controller_base import ControllerConfigBase
from app.control.controllers import CONTROLLER_TYPES
from app.control.motion_protocol import MotionBase
from app.control.motions import PoseMotion, Targets
from app.control.telemetry import TelemetryLog
from app.episode.loop import simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.errors import ConfigError
from app.ik.limits import JointLimits
from app.ik.limits.given_rows import RowsLimitParams
from app.ik.limits.joint_box import LIMIT_MARGIN
from app.ik.qp import QPSolver
from app.ik.qp_builder import QPBuilder
from app.ik.tasks import FrameTask
from app.ik.tasks.given_rows import RowsParams
from app.kinematics.base_frame import BaseFrame
from app.tasks import TASK_TYPES as MOTION_TYPES
from app.validation import Check, CheckContext, Where

DOF = 0  # the joint the toy task pushes and the toy limit caps (the WidowX AI's base yaw)


class JointSpeedTask:
    """Toy QP task: joint ``dof`` should turn at ``speed`` [rad/s], with weight ``weight`` (one row J qdot = V)."""

    slot = "rows_task"

    def __init__(self, n_dofs: int, dof: int, speed: float, weight: float):
        self.row = np.zeros(n_dofs)
        self.row[dof] = weight
        self.target = weight * speed

    def params(self, batch: int) -> RowsParams:
        return RowsParams(np.tile(self.row, (batch, 1, 1)), np.full((batch, 1), self.target))


class JointSpeedCap:
    """Toy QP limit: |qdot[dof]| <= cap [rad/s] (one inequality row per configuration)."""

    slot = "rows_limit"

    def __init__(self, n_dofs: int, dof: int, cap: float):
        self.row, self.cap = np.eye(n_dofs)[dof], cap

    def params(self, batch: int) -> RowsLimitParams:
        return RowsLimitParams(np.tile(self.row, (batch, 1, 1)), np.full((batch, 1), -self.cap),
                               np.full((batch, 1), self.cap), np.ones(batch, dtype=np.int64))


@dataclass(frozen=True)
class CappedQPConfig(ControllerConfigBase):
    """Toy controller's settings: the frame gain [1/s], the pushed joint's speed and cap [rad/s]."""

    controller_cls: ClassVar[type]
    dt: float = field(default=1.0 / 240.0, metadata={"internal": True})
    control_hz: float | None = None
    gain: float = 5.0
    push: float = 1.0
    cap: float = 0.3
    stall_window: int = 120
    stall_tol: float = 1e-3

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        return controller_checks(self, at, ctx) + [(at("gain"), self.gain > 0, f"must be > 0 1/s, got {self.gain}"),
                                                   (at("cap"), self.cap > 0, f"must be > 0 rad/s, got {self.cap}")]


class CappedQPController:
    """Toy controller: a QP of the end effector's frame task, the toy task and the joint box with the toy cap."""

    def __init__(self, robot, link: str, config: CappedQPConfig):
        self.robot, self.config, n = robot, config, robot.model.n_dofs
        self.frame = FrameTask(robot.model, link, config.gain, rot_mask=(False, False, False))
        self.tasks = (self.frame, JointSpeedTask(n, DOF, config.push, weight=10.0))
        self.limits = (JointLimits(robot.model, 1.0, None, LIMIT_MARGIN), JointSpeedCap(n, DOF, config.cap))
        self.builder, self.base = QPBuilder(n, n + 1), BaseFrame(*robot.base_frames())
        self.solvers = [QPSolver(n, n + 1) for _ in range(robot.n_envs)]
        self.telemetry, self.commands = TelemetryLog(), []

    @classmethod
    def from_config(cls, robot, config, motion, links, dt, obstacles=(), seed=0):
        return cls(robot, links[0], dataclasses.replace(config, dt=dt))

    def track(self, t: float, targets: Targets, grasp=None) -> None:
        q, v = self.robot.read_states()
        self.frame.set_target_frames(self.base.targets_to_base(targets.pos[:, 0], None)[0], None)
        qps = self.builder.build(q, v, self.tasks, self.limits, self.config.dt)
        solutions = [solver.solve(qps[e]) for e, solver in enumerate(self.solvers)]
        qdot, ok = np.array([s.qdot for s in solutions]), np.array([s.solved for s in solutions])
        self.robot.command(q + self.config.dt * qdot, qdot, position_gain=0.0)
        self.commands.append(qdot)
        err = np.linalg.norm(qps.task_error[:, 0, :3], axis=1)
        n = len(q)
        self.telemetry.record(t, err, np.zeros(n), ok, np.ones(n), np.zeros(n, int), np.full(n, np.inf),
                              np.zeros(n, bool), [[] for _ in range(n)])


CappedQPConfig.controller_cls = CappedQPController


@dataclass(frozen=True)
class LineMotion(PoseMotion):
    """Toy run task type: the end effector moves from ``start`` [m] (relative to the base) at ``velocity`` [m/s]."""

    type: ClassVar[str] = "line"
    start: tuple[float, float, float] = (0.3, -0.05, 0.2)
    velocity: tuple[float, float, float] = (0.0, 0.1, 0.0)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        speed = float(np.linalg.norm(self.velocity))
        return super().checks(at, ctx) + [(at("velocity"), speed <= 1.0, f"must be at most 1 m/s, got {speed:g}")]

    def targets(self, n_envs, base_pos, seed, envs=None):
        return _LineTargets(self, n_envs if envs is None else len(envs), np.asarray(base_pos, dtype=float))


class _LineTargets(MotionBase):
    n_targets = 1

    def __init__(self, task: LineMotion, n: int, base_pos: np.ndarray):
        self.task, self.n, self.base_pos = task, n, base_pos

    def __call__(self, t: float) -> Targets:
        pos = self.base_pos + np.asarray(self.task.start) + t * np.asarray(self.task.velocity)
        vel = np.broadcast_to(self.task.velocity, (self.n, 1, 3)).astype(float)
        return Targets(np.tile(pos, (self.n, 1, 1)), np.tile(self.task.quat, (self.n, 1, 1)).astype(float), vel)


RUN = """scene: scenes/table.yaml
n_envs: 2
duration: 0.2
controller: {type: capped_qp, control_hz: 120, cap: %s}
task: {type: line, start: [0.3, -0.05, 0.2], velocity: %s}
video: {enabled: false}
report: {enabled: false}
"""


@pytest.fixture
def registered(monkeypatch):
    """The toy controller and motion in the registries for one test."""
    monkeypatch.setitem(CONTROLLER_TYPES, "capped_qp", CappedQPConfig)
    monkeypatch.setitem(MOTION_TYPES, "line", LineMotion)


def _run_file(tmp_path, cap="0.3", velocity="[0.0, 0.1, 0.0]"):
    path = tmp_path / "toy.yaml"
    path.write_text(RUN % (cap, velocity))
    return path


@pytest.mark.parametrize("cap, velocity, message", [
    ("-1", "[0.0, 0.1, 0.0]", r"toy.yaml: controller.cap: must be > 0 rad/s, got -1"),
    ("0.3", "[0.0, 2.0, 0.0]", r"toy.yaml: task.velocity: must be at most 1 m/s, got 2"),
    ("0.3", "[0.0, 0.1]", r"toy.yaml: task.velocity: expected a list of 3 values"),
    ("0.3", "[0.0, 0.1, 0.0]", None),
])
def test_a_new_controller_and_motion_are_read_and_checked_by_the_loader(registered, tmp_path, cap, velocity, message):
    path = _run_file(tmp_path, cap, velocity)
    if message is None:
        run = load_run_config(path)
        assert isinstance(run.controller, CappedQPConfig) and isinstance(run.motion, LineMotion)
        assert run.motion.velocity == (0.0, 0.1, 0.0) and run.controller.control_hz == 120
        return
    with pytest.raises(ConfigError, match=message):
        load_run_config(path)


@pytest.mark.parametrize("link, message", [
    ("ee_gripper_link", None),
    ("ee_link_typo", r"toy.yaml: scene_overrides.cameras\[0\].link: unknown link 'ee_link_typo'; links: \[.*'ee_gripper_link'"),
])
def test_a_new_camera_is_a_scene_entry_only_and_its_link_is_checked_against_the_robot(registered, tmp_path, link,
                                                                                      message):
    path = _run_file(tmp_path)
    cameras = [{"name": "wrist", "link": link, "offset_pos": [0.0, 0.0, 0.02], "width": 64, "height": 48}]
    if message is None:
        (camera,) = load_run_config(path, {"scene_overrides.cameras": cameras}).scene_config.cameras
        assert (camera.name, camera.link, camera.width, camera.height) == ("wrist", link, 64, 48)
        return
    with pytest.raises(ConfigError, match=message):
        load_run_config(path, {"scene_overrides.cameras": cameras})


def test_keys_of_another_type_are_refused_with_the_new_types_valid_keys(registered, tmp_path):
    path = _run_file(tmp_path)
    with pytest.raises(ConfigError, match=r"controller: unknown key 'gamma'.*'cap'.*belongs to type \['qp'\]"):
        load_run_config(path, {"controller.gamma": 0.2})


def test_a_new_qp_task_and_limit_run_in_a_new_controller_following_a_new_motion(registered, tmp_path):
    """0.2 s in PyBullet: every tick the toy task pushes the base joint to the toy cap and no further; the frame
    task keeps the end effector near the moving line."""
    run = load_run_config(_run_file(tmp_path))
    scene, robot = build_scene(run)
    try:
        episode, _ = simulate(run, scene, robot, run_motion(run, robot=robot), show_progress=False)
        controller = episode.controller
        q_end = robot.read_states()[0]
    finally:
        scene.close()
    cmd = np.array(controller.commands)  # (n_ticks, n_envs, n_dofs)
    assert cmd.shape == (int(round(0.2 * 120)), 2, robot.model.n_dofs)
    assert controller.telemetry.arrays()["solver_ok"].all()
    assert np.all(np.abs(cmd[:, :, DOF]) <= 0.3 * (1 + 1e-5))  # the limit: never past the cap
    assert np.all(cmd[:, :, DOF] > 0.9 * 0.3)  # the task: pushed to the cap every tick
    start = np.array(run.scene_config.robot.init_qpos)[DOF]
    assert np.all(q_end[:, DOF] - start > 0.5 * 0.3 * 0.2)  # the arm did turn that way
    assert controller.telemetry.arrays()["pos_err"][-1].max() < 0.05
