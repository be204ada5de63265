"""The pose-IK controller: one batched pose-IK call for every environment per tick (Genesis' batched IK
example), the answer commanded to the motors or set directly. It talks to any
:class:`~app.control.robot_protocol.ControlledRobot`; targets are in each environment's frame."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from app.control.config_checks import controller_checks
from app.control.controller_base import ACCEL_MAX, ControllerConfigBase
from app.control.joint_step import JointStep
from app.control.motions import PoseMotion, Targets
from app.control.robot_protocol import ControlledRobot
from app.control.telemetry import StallDetector, TelemetryLog
from app.ik._lm import pose_error_norms_kernel
from app.ik.api import prepared_solver
from app.ik.limits.distance import GraspState
from app.ik.solver import MAX_ITERS, MAX_RESTARTS, IKOptions
from app.ik.targets import PoseTargets
from app.kernels.dispatch import EntryPoints, kernel_array
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import quat_to_matrix
from app.validation import Check, CheckContext, Where, check_finite

MODES = ("control", "kinematic")


@dataclass(frozen=True)
class PoseIKControllerConfig(ControllerConfigBase):
    """Settings of the pose-IK controller (the IK's own defaults where they are the solver's).

    Attributes:
        control_hz: Control rate [Hz]; None: every physics step.
        mode: 'control' drives the motors, 'kinematic' sets the state directly.
        pos_tol, rot_tol, max_iters, max_restarts: The IK's (app.ik.solver.IKOptions).
        stall_window: Ticks over which a stall is judged; stall_tol: error counted as reached [m].
        accel_max: Joint acceleration bound [rad/s^2] of the commanded motion in control mode (as the QP
            controller's); None: velocity and position limits only.
        jerk_max: Joint jerk bound [rad/s^3] of the commanded motion in control mode (app.control.joint_step's
            shaping: the goal's motion fed forward, braking planned; the app's jerk limit is JERK_MAX); None (the
            default): none, the step is clipped, not shaped, and follows a target that jumps or turns at once.
        dt: Control tick [s] (set by the run, not in YAML).
    """

    controller_cls: ClassVar[type]
    dt: float = field(default=1.0 / 240.0, metadata={"internal": True})
    control_hz: float | None = None
    mode: str = "control"
    pos_tol: float = IKOptions.pos_tol  # the IK's defaults, defined once (app.ik.solver.IKOptions)
    rot_tol: float = IKOptions.rot_tol
    max_iters: int = IKOptions.max_iters
    max_restarts: int = IKOptions.max_restarts
    stall_window: int = 120
    stall_tol: float = 1e-3
    accel_max: float | None = ACCEL_MAX
    jerk_max: float | None = None

    def tolerances(self) -> dict[str, float]:
        """The IK's own tolerances (pos_tol [m], rot_tol [rad])."""
        return {"pos_tol": self.pos_tol, "rot_tol": self.rot_tol}

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """What each value must be (rows for app.validation.raise_first): every controller's rate and stall
        settings, then the mode and the IK's tolerances and budgets."""
        return controller_checks(self, at, ctx) + [
            (at("mode"), self.mode in MODES, f"'{self.mode}' is not one of {list(MODES)}"),
            (at("pos_tol"), self.pos_tol > 0, f"must be > 0 m, got {self.pos_tol}"),
            (at("rot_tol"), self.rot_tol > 0, f"must be > 0 rad, got {self.rot_tol}"),
            (at("max_iters"), 1 <= self.max_iters <= MAX_ITERS, f"must be in [1, {MAX_ITERS}], got {self.max_iters}"),
            (at("max_restarts"), 0 <= self.max_restarts <= MAX_RESTARTS,
             f"must be in [0, {MAX_RESTARTS}], got {self.max_restarts}"),
            (at("accel_max"), self.accel_max is None or self.accel_max > 0,
             f"must be > 0 rad/s^2 (or omitted), got {self.accel_max}"),
            (at("jerk_max"), self.jerk_max is None or (self.jerk_max > 0 and self.accel_max is not None),
             f"must be > 0 rad/s^3 with an accel_max (or null), got {self.jerk_max}")]


class PoseIKController:
    """One batched pose-IK call for every environment per tick.

    Args:
        robot: Any ControlledRobot.
        links: Link names: one (pose IK) or several (multi-link IK, one target each).
        pos_mask, rot_mask: IK masks (pos_mask on the environment's axes). config: Settings. seed: The IK's.
    """

    def __init__(self, robot: ControlledRobot, links: list[str], pos_mask=(True, True, True),
                 rot_mask=(True, True, True), config: PoseIKControllerConfig | None = None, seed: int = 0):
        self.robot, self.links = robot, list(links)
        self.config = cfg = config or PoseIKControllerConfig()
        self.masks = dict(pos_mask=tuple(pos_mask), rot_mask=tuple(rot_mask))
        self.base = BaseFrame(*robot.base_frames())
        frame = {} if np.array_equal(self.base.R, np.eye(3)) else {"frame_rotation": self.base.R}
        self.ik_options = dict(pos_tol=cfg.pos_tol, rot_tol=cfg.rot_tol, max_iters=cfg.max_iters,
                               max_restarts=cfg.max_restarts, seed=seed, warn=False, **frame)
        # warn=False: a tick's misses are in the telemetry (solver_ok), the run's summary and a track's stretches,
        # one line each, not a warning per tick
        self.stalls = StallDetector(robot.n_envs, cfg.stall_window, cfg.stall_tol)
        self.telemetry = TelemetryLog()
        k, n = len(self.links), robot.n_envs
        self._error_task = PoseTargets.build(robot.model, self.links, [np.zeros(3)] * k, [np.array([1.0, 0, 0, 0])] * k,
                                             None, pos_mask, rot_mask, frame=self.base.R).task_tables
        self._joint_step = JointStep(robot.model, cfg.accel_max, jerk_max=cfg.jerk_max)
        # the solver model.inverse_kinematics(_multilink) calls for these arguments, held: the same answers
        options = {key: v for key, v in self.ik_options.items() if key != "frame_rotation"}
        self._solver = prepared_solver(robot.model, self.links, (True,) * k, (True,) * k, None, pos_mask, rot_mask,
                                       None, True, frame.get("frame_rotation"), options)
        # what the telemetry records of every tick that this controller does not have (no QP, no distances)
        self._no_qp = (np.ones(n), np.zeros(n, int), np.full(n, np.inf))
        for a in self._no_qp:
            a.setflags(write=False)  # one array in every telemetry row (recorded as owned)
        self._compiled = EntryPoints()  # the tick's kernels, called directly
        self._last_goal: np.ndarray | None = None  # the last tick's IK answers in control mode (n_envs, n_dofs)

    @classmethod
    def from_config(cls, robot: ControlledRobot, config: PoseIKControllerConfig, motion: PoseMotion, links: list[str],
                    dt: float, obstacles: tuple[str, ...] = (), seed: int = 0) -> PoseIKController:
        """The controller a run config asks for (obstacles are not this controller's concern)."""
        del obstacles
        return cls(robot, links, motion.pos_mask, motion.rot_mask, dataclasses.replace(config, dt=dt), seed)

    def track(self, t: float, targets: Targets, grasp: GraspState | None = None) -> None:
        """One tick towards ``targets`` (environment frames); ``grasp`` is not this controller's concern (it keeps
        no collision rows)."""
        del grasp
        robot, n = self.robot, len(self.links)
        pos, quat = self.base.targets_to_base(self.aim(targets.pos, targets.vel).reshape(-1, 3),
                                              targets.quat.reshape(-1, 4))
        rot = np.ascontiguousarray(quat_to_matrix(quat).reshape(robot.n_envs, n, 3, 3))  # as the IK's own check
        pos = check_finite(np.ascontiguousarray(pos.reshape(robot.n_envs, n, 3)), "target pos")
        now = (targets.pos.reshape(-1, 3) - self.base.p) @ self.base.R  # as BaseFrame.targets_to_base
        self.track_base(t, pos, check_finite(rot, "target quat"), np.ascontiguousarray(now.reshape(robot.n_envs, n, 3)),
                        targets.pos[:, 0])

    def aim(self, pos: np.ndarray, vel: np.ndarray) -> np.ndarray:
        """Where the IK aims for targets at pos [m] moving at vel [m/s] (same shapes (..., 3)): one tick ahead in
        control mode (the motors get there by the next tick), the target itself in kinematic mode."""
        return pos if self.config.mode == "kinematic" else pos + vel * self.config.dt

    def track_base(self, t: float, aim: np.ndarray, rot: np.ndarray, pos: np.ndarray, pos_env: np.ndarray) -> None:
        """One tick, the targets already checked and in the base frame (:meth:`track` converts them; a trajectory's
        ticks can be converted all at once): aim (n_envs, k, 3) [m] (:meth:`aim`), rot (n_envs, k, 3, 3), the
        targets now pos (n_envs, k, 3), all C-contiguous float64; pos_env (n_envs, 3): the first target in the
        environment frame (the stall detector's)."""
        robot = self.robot
        q_now, v_now = robot.read_states()
        info = self._solver.solve_rows(self._seed(q_now), aim, rot)
        if self.config.mode == "kinematic":
            robot.set_state(info.q)
            q_now = robot.read_states()[0]  # the state set (clipped into the limits)
        else:  # commanding moves nothing until the next physics step: q_now stays the measured state
            robot.command(*self._velocity_limited(q_now, v_now, info.q), position_gain=0.0)
            self._last_goal = np.where(np.atleast_1d(info.converged)[:, None], info.q, np.nan)  # a miss: not a seed
        self._record(t, pos, rot, pos_env, q_now, np.atleast_1d(info.converged))

    def reset(self, envs=None) -> None:
        """Environments ``envs`` (None: all) were moved by other means: their next IK starts from the measured
        joints and their step from the measured velocity."""
        if envs is None or self._last_goal is None:
            self._last_goal = None
        else:
            self._last_goal[np.asarray(envs, dtype=int)] = np.nan
        self._joint_step.reset(envs)

    def _seed(self, q_now: np.ndarray) -> np.ndarray:
        """Where each environment's IK starts: with a jerk bound (control mode) from its last answer (arm joints:
        the answers then trace the targets' motion, not the arm's, so a redundant arm's solutions do not follow it
        round its null space and the shaped step's feed-forward is the goal's own), else (and after a tick whose IK
        missed: its answer is no seed) from the measured joints."""
        last = self._last_goal
        if last is None or last.shape != q_now.shape or self.config.jerk_max is None:
            return q_now
        seed = q_now.copy()
        arm = self.robot.arm_dofs
        fresh = np.isnan(last[:, arm]).any(axis=1)
        seed[np.ix_(~fresh, arm)] = last[np.ix_(~fresh, arm)]
        return seed

    def _velocity_limited(self, q_now: np.ndarray, v_now: np.ndarray, q_goal: np.ndarray) -> tuple:
        """The step towards the IK answer that the motors can follow (app.control.joint_step): (q_cmd, qdot),
        each (n_envs, n_dofs)."""
        return self._joint_step(q_now, v_now, q_goal, self.config.dt)

    def _record(self, t: float, pos: np.ndarray, rot: np.ndarray, pos_env: np.ndarray, q: np.ndarray,
                converged: np.ndarray) -> None:
        """Tracking errors of the measured state q (n_envs, n_dofs) (not of the IK answer) against the targets
        (base frame: pos (n_envs, k, 3), rot (n_envs, k, 3, 3)), masked as the IK; pos_env (n_envs, 3): the
        first target in the environment frame (the stall detector's)."""
        m = self.robot.model
        args = (kernel_array(q), m.fk_tables, m.jacobian_tables, kernel_array(pos), kernel_array(rot), self._error_task)
        links_pos_err, _, pos_err, rot_err = self._compiled("errors", pose_error_norms_kernel, args)
        stalled = self.stalls.update(pos_err, pos_env)
        self.telemetry.record(t, pos_err, rot_err, converged, *self._no_qp, stalled,
                              [[] for _ in range(self.robot.n_envs)], links_pos_err, owned=True)


PoseIKControllerConfig.controller_cls = PoseIKController
