"""The QP controller: pose error -> desired twist (gain + feed-forward) -> QP with joint limits and
collision margins -> qdot; q_cmd = q + h qdot commanded with velocity feed-forward. A QP that OSQP
does not report solved commands a safe stop (hold the measured q, zero velocity) and is reported.
It talks to any :class:`~app.control.robot_protocol.ControlledRobot`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from app.collision.checker import CollisionModel
from app.control.config_checks import controller_checks, link_checks
from app.control.controller_base import ACCEL_MAX, ControllerConfigBase
from app.control.motions import PoseMotion, Targets
from app.control.robot_protocol import ControlledRobot
from app.control.telemetry import StallDetector, TelemetryLog
from app.errors import InputError
from app.ik._lm import link_error_norms
from app.ik._qp_kernel import active_rows
from app.ik.limits import CollisionLimit, CollisionPairs, DistanceRows, JointLimits, SphereRows
from app.ik.limits.distance import GraspState
from app.ik.limits.joint_box import LIMIT_MARGIN
from app.ik.limits.sphere_rows import merge_rows
from app.ik.qp import QPBatch, QPSolver
from app.ik.qp_builder import QPBuilder
from app.ik.tasks import FrameTask, PostureTask
from app.kernels.dispatch import kernel_array
from app.kinematics.base_frame import BaseFrame
from app.validation import Check, CheckContext, Where, as_rotation_matrices, as_vectors

log = logging.getLogger(__name__)
DISTANCE_BUFFER = 1e-3  # [m] added to d_safe in the collision rows (tracking error and linearisation)
MAX_ROWS = 1000  # collision rows per environment in the QP a config may ask for


@dataclass(frozen=True)
class QPControllerConfig(ControllerConfigBase):
    """Settings of the QP controller.

    Attributes:
        dt: Control tick h [s] (a multiple of the physics step; set by the run, not in YAML).
        control_hz: Control rate [Hz]; None: every physics step.
        gain: Pose error -> twist gain [1/s].
        velocity_scale: Fraction of the URDF velocity limits allowed.
        accel_max: Joint acceleration window around the measured velocity [rad/s^2]; None for none.
            Commands the motors can follow: without it PyBullet overshot the velocity bounds by
            up to 12 % after full-speed reversals.
        d_safe: Collision margin [m]; gamma: fraction of the remaining margin allowed to close per
            tick. 0.05 (with a 0.15 m detection distance) keeps the WidowX AI within 0.1 mm of
            the margin at full speed; 0.5 with 0.05 m let it dive 11 mm into the margin, because
            the motors cannot stop a 2 m/s arm within one 4 ms tick.
        detection_distance: Pairs farther than this [m] give no collision row. self_pairs: (link_a, link_b)
            robot links to keep apart too. arm_pairs: for a robot with several arms (robot.arms, robots:),
            keep every link of each arm d_safe from every link of the others (added as self pairs).
            max_rows: collision rows per environment (closest first).
        collision_model: Where the collision rows come from: ``pybullet`` (the simulator's closest points, per
            environment per tick) or ``spheres`` (the link spheres of app.collision against the table, the
            scene's boxes and its box, cylinder and sphere objects, every environment in one compiled call; a
            lower bound of the true distance, so the margin holds for the real geometry; the objects' poses are read
            from the simulator each tick, a held one moves with the gripper; URDF and mesh objects still come from
            the simulator's closest points). Spheres make the loop ~1.6-2.3x as fast with 16 environments
            (scripts/bench_qp_collision.py) and the soak holds d_safe - 0.1 mm by PyBullet's measure, but the
            margin is kept on the spheres, up to a link's excess (6-9 mm on the WidowX AI's fingers) farther from
            the real shapes: a pick-and-place's fingers then descend to the table more slowly (the qp pick test
            closes at 3.4 s instead of 2.5 s and needs 8 s instead of 7), so PyBullet stays the default.
        posture_weight: Weight eps of the posture term (towards mid-range, in the task nullspace).
        posture_gain: Gain [1/s] of the posture velocity towards the mid-point of the limits.
        stall_window: Ticks over which a stall is judged; stall_tol: error counted as reached [m].
    """

    controller_cls: ClassVar[type]
    dt: float = field(default=1.0 / 240.0, metadata={"internal": True})
    control_hz: float | None = None
    gain: float = 10.0
    velocity_scale: float = 1.0
    accel_max: float | None = ACCEL_MAX
    d_safe: float = 0.01
    gamma: float = 0.05
    detection_distance: float = 0.15
    self_pairs: tuple[tuple[str, str], ...] = ()
    arm_pairs: bool = True
    max_rows: int = 10
    collision_model: str = "pybullet"
    posture_weight: float = 1e-3
    posture_gain: float = 1.0
    stall_window: int = 120
    stall_tol: float = 1e-3
    @property
    def keeps_arms_apart(self) -> bool:
        """Whether a robot's several arms are kept d_safe apart (arm_pairs)."""
        return self.arm_pairs

    @property
    def rows_from_spheres(self) -> bool:
        """Whether the collision rows come from the link spheres (collision_model: spheres)."""
        return self.collision_model == "spheres"

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """What each value must be (rows for app.validation.raise_first): every controller's rate and stall
        settings, the QP's gains, margins and sizes; with the robot's model (ctx.model), the self pairs' links."""
        rows = controller_checks(self, at, ctx) + [
            (at("gain"), self.gain > 0, f"must be > 0 1/s, got {self.gain}"),
            (at("velocity_scale"), 0 < self.velocity_scale <= 1, f"must be in (0, 1], got {self.velocity_scale}"),
            (at("accel_max"), self.accel_max is None or self.accel_max > 0,
             f"must be > 0 (or omitted), got {self.accel_max}"),
            (at("d_safe"), self.d_safe >= 0, f"must be >= 0 m, got {self.d_safe}"),
            (at("gamma"), 0 < self.gamma <= 1, f"must be in (0, 1], got {self.gamma}"),
            (at("detection_distance"), self.detection_distance > self.d_safe,
             f"must exceed d_safe={self.d_safe} m, got {self.detection_distance}"),
            (at("max_rows"), 1 <= self.max_rows <= MAX_ROWS,
             f"must be 1..{MAX_ROWS} collision rows per environment (each is a QP constraint), got {self.max_rows}"),
            (at("collision_model"), self.collision_model in ("pybullet", "spheres"),
             f"must be 'pybullet' (the simulator's closest points) or 'spheres' (the link spheres), got "
             f"{self.collision_model!r}"),
            (at("posture_weight"), self.posture_weight >= 0, f"must be >= 0, got {self.posture_weight}"),
            (at("posture_gain"), self.posture_gain >= 0, f"must be >= 0 1/s, got {self.posture_gain}")]
        if ctx.model is not None:
            rows += link_checks(ctx.model, [(at("self_pairs", i, k), link) for i, pair in enumerate(self.self_pairs)
                                            for k, link in enumerate(pair)])
        return rows


class QPController:
    """Constrained differential IK for every environment of one robot.

    Args:
        robot: Any :class:`~app.control.robot_protocol.ControlledRobot` (the PyBullet one, or a numpy integrator).
        task: The frame task to track, or several (one target each, every one tracked; targets set in the base
            frame each tick).
        config: Controller settings.
        collisions: Pairs the robot measures (``robot.distance_rows``: boxes, self pairs); None for none.
        spheres: Pairs measured by the link spheres (self, arm-arm, world boxes); None for none. Rows of both
            are merged, each environment's closest ``max_rows`` kept.
    """

    def __init__(self, robot: ControlledRobot, task: FrameTask | Sequence[FrameTask], config: QPControllerConfig,
                 collisions: CollisionPairs | None = None, spheres: SphereRows | None = None):
        self.tasks: tuple[FrameTask, ...] = (task,) if isinstance(task, FrameTask) else tuple(task)
        if not self.tasks:
            raise InputError("the QP controller needs at least one frame task")
        self.robot, self.config = robot, config
        self.collisions, self.spheres = collisions, spheres
        self.base = BaseFrame(*robot.base_frames())
        n = robot.model.n_dofs
        held = np.setdiff1d(np.arange(n), robot.arm_dofs)  # a gripper's DOFs stay put
        self.joint_limits = JointLimits(robot.model, config.velocity_scale, config.accel_max, LIMIT_MARGIN, held)
        # the rows aim slightly outside d_safe: the motors' tracking error and the rows' linearisation
        # let the arm close a fraction of a millimetre more than the QP allows (measured 0.32 mm over 60 s)
        self.collision_limit = CollisionLimit(config.d_safe + DISTANCE_BUFFER, config.gamma)
        self.posture = PostureTask(robot.model, config.posture_gain, config.posture_weight)
        n = robot.model.n_dofs
        self.n_rows = n + (config.max_rows if collisions or spheres else 0)
        self.builder = QPBuilder(n, self.n_rows)
        self._slots: dict | None = None  # posture, joint box and the empty slots, made at the first tick
        self.solvers = [QPSolver(n, self.n_rows) for _ in range(robot.n_envs)]
        self.stalls = StallDetector(robot.n_envs, config.stall_window, config.stall_tol)
        self.telemetry = TelemetryLog()
        self.last_qdot = np.zeros((robot.n_envs, n))
        self._no_rows = DistanceRows.empty(n)  # the rows of a tick without any (shared: never written)
        self._no_rows_params = (config.dt, self.collision_limit.with_rows(self._no_rows).params(config.dt))
        self._failing: list[str | None] = [None] * robot.n_envs  # logged once per failure episode
        self._certified = np.zeros(robot.n_envs, dtype=bool)  # the last tick's answer came without OSQP

    @classmethod
    def from_config(cls, robot: ControlledRobot, config: QPControllerConfig, motion: PoseMotion, links: list[str],
                    dt: float, obstacles: tuple[str, ...] = (), seed: int = 0, *,
                    collision: CollisionModel | None = None) -> QPController:
        """The controller a run config asks for: every link of ``links`` tracked (one frame task each, the motion's
        masks), ``obstacles`` (box names the robot measures) and the config's self pairs watched; with
        ``collision`` (the sphere model of the static boxes and the self pairs) those pairs come from the spheres
        and the robot measures only ``obstacles``."""
        del seed  # deterministic
        frames = [FrameTask(robot.model, link, config.gain, motion.pos_mask, motion.rot_mask) for link in links]
        self_pairs = () if collision is not None else config.self_pairs
        pairs = CollisionPairs(tuple(obstacles), self_pairs, config.detection_distance,
                               config.max_rows) if obstacles or self_pairs else None
        spheres = None if collision is None or collision.n_pairs == 0 else \
            SphereRows(collision, config.detection_distance, config.max_rows)
        return cls(robot, frames, dataclasses.replace(config, dt=dt), pairs, spheres)

    def reset(self, envs=None) -> None:
        """Environments ``envs`` (None: all) were moved by other means. Nothing here depends on their last tick's
        motion but OSQP's warm start, which only speeds the next solve (every tick's QP is built from the measured
        state): nothing to forget. Here so that every controller answers the same call."""
        del envs

    def __repr__(self) -> str:
        tasks = ", ".join(repr(t) for t in self.tasks)
        return f"QPController({tasks}, {self.joint_limits!r}, {self.collision_limit!r})"

    def step(self, t: float, target_pos: np.ndarray, target_quat: np.ndarray | None,
             target_twist: np.ndarray | None = None, grasp: GraspState | None = None) -> np.ndarray:
        """One tick for every environment. Targets in each environment's frame: (n_envs, 3), (n_envs, 4),
        twist (n_envs, 6) for one task; with T tasks (n_envs, T, 3), (n_envs, T, 4), (n_envs, T, 6).

        Returns the commanded joint velocities (n_envs, n_dofs).
        """
        T = len(self.tasks)
        split = lambda a: [None] * T if a is None else [a] if T == 1 else [a[:, k] for k in range(T)]  # noqa: E731
        if T > 1 and np.ndim(target_pos) != 3:
            raise InputError(f"target_pos needs one target per task: shape (n_envs, {T}, 3), "
                             f"got {np.shape(target_pos)}")
        targets = [self._base_frame_targets(*args) for args in
                   zip(split(target_pos), split(target_quat), split(target_twist))]
        n_envs = self.robot.n_envs
        return self.step_base(t, targets[0] if T == 1 else targets,
                              np.asarray(target_pos, dtype=float).reshape(n_envs, -1, 3)[:, 0], grasp)

    def step_base(self, t: float, targets: tuple | Sequence[tuple], pos_env: np.ndarray,
                  grasp: GraspState | None = None) -> np.ndarray:
        """:meth:`step` for targets already checked and in the base frame (as :meth:`build` takes them: a
        trajectory's ticks can be converted all at once); pos_env (n_envs, 3): the first task's target in the
        environment frame (the stall detector's). Returns the commanded joint velocities (n_envs, n_dofs)."""
        robot, cfg = self.robot, self.config
        q, v = robot.read_states()
        rows = self.distance_rows(q, grasp)
        qps, err = self.build(q, v, targets, rows)
        err = err.reshape(len(q), -1, 6)
        qdot, ok = self.solve(t, qps)
        n_active, names, dmin = self._active(qps, qdot, ok, rows)
        q_cmd = q + cfg.dt * qdot  # a failed QP leaves qdot = 0: hold the measured q (safe stop)
        # q_cmd is integrated from the measured q, so a position gain would only add kp * qdot to the
        # motor's velocity target (measured: kp = 0.1 let joints reach 2.8x their bound); kp = 0 and
        # kd = 1 make the motor track qdot exactly, within the effort limits.
        robot.command(q_cmd, qdot, position_gain=0.0)
        # the worst link's errors (n_envs,), as the IK controller reports a multi-link task (the same kernel)
        links_pos_err, _, pos_err, rot_err = link_error_norms(np.ascontiguousarray(err))
        stalled = self.stalls.update(pos_err, pos_env)
        self.telemetry.record(t, pos_err, rot_err, ok, np.where(ok, qps.scale, 0.0), n_active, dmin, stalled, names,
                              links_pos_err, owned=True)
        self.last_qdot = qdot
        return qdot

    def _base_frame_targets(self, pos: object, quat: object | None, twist: object | None) -> tuple:
        """Environment-frame targets, checked, as base-frame (pos (n_envs, 3), rotation matrices or None, twist)."""
        n_envs = self.robot.n_envs
        pos = as_vectors(pos, "target_pos", 3).reshape(-1, 3)
        rot = None if quat is None else as_rotation_matrices(quat, "target_quat").reshape(-1, 3, 3)
        twist = None if twist is None else as_vectors(twist, "target_twist", 6).reshape(-1, 6)
        if not len(pos) == n_envs == (n_envs if rot is None else len(rot)) == (n_envs if twist is None else len(twist)):
            for name, arr in (("target_pos", pos), ("target_quat", rot), ("target_twist", twist)):
                if arr is not None and len(arr) != n_envs:
                    raise InputError(f"{name} needs one row per environment ({n_envs}), got {len(arr)}")
        base = self.base
        return ((pos - base.p) @ base.R, None if rot is None else np.matmul(base.R.T, rot),  # BaseFrame's, inline
                None if twist is None else base.twists_to_base(twist))

    def build(self, q: np.ndarray, v: np.ndarray, targets: tuple | Sequence[tuple],
              rows: DistanceRows) -> tuple[QPBatch, np.ndarray]:
        """The tick's QP of every environment (no solver, no PyBullet) and the tasks' errors, (n_envs, 6) for one
        task, (n_envs, T, 6) for T (as one- and multi-link IK report them): every frame task, the posture, the
        joint box and the distance rows, by the one builder (app.ik.qp_builder).

        Args:
            q, v: Measured joint positions and velocities. Shapes (n_envs, n_dofs).
            targets: Checked base-frame (pos (n_envs, 3), rotation matrices (n_envs, 3, 3) or None,
                twist (n_envs, 6) or None) for one task; a list of them, one per task, for several.
            rows: Distance rows of every environment (:meth:`distance_rows`).
        """
        per_task = [targets] if isinstance(targets, tuple) else list(targets)
        if len(per_task) != len(self.tasks):
            raise InputError(f"targets for {len(per_task)} tasks given; this controller tracks {len(self.tasks)}")
        for task, target in zip(self.tasks, per_task):
            task.set_target_frames(*target)
        if self._slots is None or len(self._slots["posture"].q_ref) != q.shape[1]:  # the parts fixed per run
            self._slots = self.builder.slots(len(q), self.config.dt, self.tasks + (self.posture,),
                                             (self.joint_limits,))
        dt = self.config.dt
        distance = self._no_rows_params[1] if rows is self._no_rows and self._no_rows_params[0] == dt else \
            self.collision_limit.with_rows(rows).params(dt)
        slots = dict(self._slots, frame=tuple(task.params(len(q)) for task in self.tasks), distance=distance)
        qps = self.builder.build_slots(kernel_array(q), kernel_array(v), slots)
        return qps, qps.task_error[:, 0] if len(self.tasks) == 1 else qps.task_error

    def track(self, t: float, targets: Targets, grasp: GraspState | None = None) -> None:
        """One tick towards ``targets``, one per frame task (twist feed-forward from their velocities); ``grasp``:
        the contacts the motion means this tick (their collision rows dropped)."""
        T = len(self.tasks)
        if targets.pos.shape[1] != T:
            raise InputError(f"the motion gives {targets.pos.shape[1]} targets; this controller tracks {T} links")
        twist = np.concatenate([targets.vel, np.zeros_like(targets.vel)], axis=2)
        orientation = any(any(task.rot_mask) for task in self.tasks)
        pick = (lambda a: a[:, 0]) if T == 1 else (lambda a: a)  # noqa: E731
        self.step(t, pick(targets.pos), pick(targets.quat) if orientation else None, pick(twist), grasp)

    def solve(self, t: float, qps: QPBatch) -> tuple[np.ndarray, np.ndarray]:
        """The certified answers of the build, and OSQP per environment where there is none (started from the
        previous tick's answer where that one was certified) -> (qdot (n_envs, n), solved (n_envs,)); a failure
        leaves qdot = 0."""
        ok = qps.exact.copy()
        qdot = np.where(ok[:, None], qps.x_exact, 0.0)
        for env in np.flatnonzero(~ok):
            warm = self.last_qdot[env] if self._certified[env] else None
            sol = self.solvers[env].solve(qps[env], warm)
            ok[env] = sol.solved
            if sol.solved:
                qdot[env] = sol.qdot
            elif self._failing[env] is None:
                log.warning("env %d: QP %s at t=%.3f s; commanding a safe stop", env, sol.status, t)
            self._failing[env] = None if sol.solved else sol.status
        if any(self._failing):  # a failure episode ends at a solved tick
            for env in np.flatnonzero(qps.exact):
                self._failing[env] = None
        self._certified = qps.exact
        return qdot, ok

    def distance_rows(self, q: np.ndarray, grasp: GraspState | None = None) -> DistanceRows:
        """The close pairs of every environment at q (n_envs, n_dofs), as rows (none if unwatched): the
        spheres' and the robot's, merged; ``grasp``: the contacts the motion means (their rows dropped)."""
        if self.spheres is None and self.collisions is None:
            return self._no_rows if q.shape[1] == self._no_rows.J_a.shape[2] else DistanceRows.empty(q.shape[1])
        rows = self._no_rows if q.shape[1] == self._no_rows.J_a.shape[2] else DistanceRows.empty(q.shape[1])
        if self.spheres is not None:
            # a simulator robot gives its objects' poses now and the pairs left unwatched per environment (a
            # handover's fingers, the fingers on the object they grasp)
            state = getattr(self.robot, "sphere_state", None)
            objects, skipped = (None, None) if state is None else state(self.spheres.collision, q, grasp)
            rows = self.spheres.rows(q, skipped, objects)
        if self.collisions is not None:
            rows = merge_rows(rows, self.robot.distance_rows(q, self.collisions, grasp), self.config.max_rows)
        return rows

    @staticmethod
    def _active(qps: QPBatch, qdot: np.ndarray, ok: np.ndarray, rows: DistanceRows,
                tol: float = 1e-6) -> tuple[np.ndarray, list[list[str]], np.ndarray]:
        """Constraint rows at a bound per solved environment: (count (n_envs,), collision-row labels, and
        the smallest watched distance (n_envs,) [m], inf where none), in one compiled call."""
        n_envs, n = qdot.shape
        env = np.zeros(len(rows), dtype=np.int64) if rows.env is None else rows.env
        count, active, dmin = active_rows(qps.A, qps.l, qps.u, qdot, ok, tol, np.ascontiguousarray(env, dtype=np.int64),
                                          np.ascontiguousarray(rows.distance, dtype=float), n)
        names: list[list[str]] = [[] for _ in range(n_envs)]
        for k in np.flatnonzero(active) if len(rows) else ():
            names[env[k]].append(rows.labels[k])
        return count, names, dmin


QPControllerConfig.controller_cls = QPController
