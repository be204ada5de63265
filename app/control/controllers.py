"""Controllers: each tick, measure, decide joint commands, send them to the motors.

``QPController``: pose error -> desired twist (gain + feed-forward) -> QP with joint limits and
collision margins -> qdot; q_cmd = q + h qdot sent with setJointMotorControlArray (position
mode, velocity feed-forward, URDF efforts). A QP that OSQP does not report solved commands a
safe stop (hold the measured q, zero velocity) and is reported.

``PoseIKController``: one batched pose-IK call for every environment per tick, the result sent
to the motors (or set directly in kinematic mode), as in Genesis' batched IK example.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from app.control.tasks import Targets
from app.control.telemetry import StallDetector, TelemetryLog
from app.errors import InputError
from app.ik._qp_kernel import rows_at_bound
from app.ik.limits import CollisionLimit, DistanceRows, JointLimits
from app.ik.qp import QPBatch, QPSolver
from app.ik.qp_builder import QPBuilder
from app.ik.tasks import FrameTask, PostureTask
from app.sim.collision import CollisionPairs, distance_rows
from app.sim.robot import Robot
from app.validation import as_rotation_matrices, as_vectors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QPControllerConfig:
    """Settings of the QP controller.

    Attributes:
        dt: Control tick h [s] (a multiple of the physics step).
        gain: Pose error -> twist gain [1/s].
        velocity_scale: Fraction of the URDF velocity limits allowed.
        accel_max: Joint acceleration window around the measured velocity [rad/s^2]; None for none.
            Commands the motors can follow: without it PyBullet overshot the velocity bounds by
            up to 12 % after full-speed reversals.
        d_safe: Collision margin [m]; gamma: fraction of the remaining margin allowed to close per
            tick. 0.05 (with a 0.15 m detection distance) keeps the WidowX AI within 0.1 mm of
            the margin at full speed; 0.5 with 0.05 m let it dive 11 mm into the margin, because
            the motors cannot stop a 2 m/s arm within one 4 ms tick.
        posture_weight: Weight eps of the posture term (towards mid-range, in the task nullspace).
        posture_gain: Gain [1/s] of the posture velocity towards the mid-point of the limits.
        stall_window: Ticks over which a stall is judged; stall_tol: error counted as reached [m].
    """

    dt: float = 1.0 / 240.0
    gain: float = 10.0
    velocity_scale: float = 1.0
    accel_max: float | None = 40.0
    d_safe: float = 0.01
    gamma: float = 0.05
    posture_weight: float = 1e-3
    posture_gain: float = 1.0
    stall_window: int = 120
    stall_tol: float = 1e-3


class QPController:
    """Constrained differential IK for every environment of one robot.

    Args:
        robot: The built robot.
        task: The frame task to track (targets set in the base frame each tick).
        config: Controller settings.
        collisions: Pairs to keep apart (static boxes, self pairs); None for no collision rows.
        box_ids: The static boxes' PyBullet bodies, per name one per environment (``scene.box_ids``).
    """

    def __init__(self, robot: Robot, task: FrameTask, config: QPControllerConfig,
                 collisions: CollisionPairs | None = None, box_ids: dict[str, list[int]] | None = None):
        self.robot, self.task, self.config = robot, task, config
        self.collisions, self.box_ids = collisions, dict(box_ids or {})
        self.joint_limits = JointLimits(robot.model, config.velocity_scale, config.accel_max)
        self.collision_limit = CollisionLimit(config.d_safe, config.gamma)
        self.posture = PostureTask(robot.model, config.posture_gain, config.posture_weight)
        n = robot.n_dofs
        self.n_rows = n + (collisions.max_rows if collisions else 0)
        self.builder = QPBuilder(n, self.n_rows)
        self.solvers = [QPSolver(n, self.n_rows) for _ in range(robot.n_envs)]
        self.stalls = StallDetector(robot.n_envs, config.stall_window, config.stall_tol)
        self.telemetry = TelemetryLog()
        self.last_qdot = np.zeros((robot.n_envs, n))
        self._failing: list[str | None] = [None] * robot.n_envs  # logged once per failure episode

    def __repr__(self) -> str:
        return f"QPController({self.task!r}, {self.joint_limits!r}, {self.collision_limit!r})"

    def step(self, t: float, target_pos: np.ndarray, target_quat: np.ndarray | None,
             target_twist: np.ndarray | None = None) -> np.ndarray:
        """One tick for every environment. Targets in each environment's frame: (n_envs, 3), (n_envs, 4),
        twist (n_envs, 6).

        Returns the commanded joint velocities (n_envs, n_dofs).
        """
        robot, cfg = self.robot, self.config
        q, v = robot.read_states()
        targets = self._base_frame_targets(target_pos, target_quat, target_twist)
        rows = self.distance_rows(q)
        qps, err = self.build(q, v, targets, rows)
        qdot, ok = self.solve(t, qps)
        n_active, names, dmin = self._active(qps, qdot, ok, rows)
        q_cmd = q + cfg.dt * qdot  # a failed QP leaves qdot = 0: hold the measured q (safe stop)
        # q_cmd is integrated from the measured q, so a position gain would only add kp * qdot to the
        # motor's velocity target (measured: kp = 0.1 let joints reach 2.8x their bound); kp = 0 and
        # kd = 1 make the motor track qdot exactly, within the effort limits.
        robot.control_dofs_position(robot.unbatch(q_cmd), velocity=robot.unbatch(qdot), position_gain=0.0)
        pos_err, rot_err = np.linalg.norm(err[:, :3], axis=1), np.linalg.norm(err[:, 3:], axis=1)
        stalled = self.stalls.update(pos_err, target_pos)
        self.telemetry.record(t, pos_err, rot_err, ok, np.where(ok, qps.scale, 0.0), n_active, dmin, stalled, names)
        self.last_qdot = qdot
        return qdot

    def _base_frame_targets(self, pos: object, quat: object | None, twist: object | None) -> tuple:
        """Environment-frame targets, checked, as base-frame (pos (n_envs, 3), rotation matrices or None, twist)."""
        n_envs = self.robot.n_envs
        pos = as_vectors(pos, "target_pos", 3).reshape(-1, 3)
        rot = None if quat is None else as_rotation_matrices(quat, "target_quat").reshape(-1, 3, 3)
        twist = None if twist is None else as_vectors(twist, "target_twist", 6).reshape(-1, 6)
        for name, arr in (("target_pos", pos), ("target_quat", rot), ("target_twist", twist)):
            if arr is not None and len(arr) != n_envs:
                raise InputError(f"{name} needs one row per environment ({n_envs}), got {len(arr)}")
        R, origins = self.robot.base_frames()
        return ((pos - origins) @ R, None if rot is None else np.matmul(R.T, rot),
                None if twist is None else np.concatenate([twist[:, :3] @ R, twist[:, 3:] @ R], axis=1))

    def build(self, q: np.ndarray, v: np.ndarray, targets: tuple, rows: DistanceRows) -> tuple[QPBatch, np.ndarray]:
        """The tick's QP of every environment (no solver, no PyBullet) and the task error (n_envs, 6): the
        frame task, the posture, the joint box and the distance rows, by the one builder (app.ik.qp_builder).

        Args:
            q, v: Measured joint positions and velocities. Shapes (n_envs, n_dofs).
            targets: Checked base-frame (pos (n_envs, 3), rotation matrices (n_envs, 3, 3) or None,
                twist (n_envs, 6) or None).
            rows: Distance rows of every environment (:meth:`distance_rows`).
        """
        self.task.set_target_frames(*targets)
        qps = self.builder.build(q, v, (self.task, self.posture),
                                 (self.joint_limits, self.collision_limit.with_rows(rows)), self.config.dt)
        return qps, qps.task_error

    def track(self, t: float, targets: Targets) -> None:
        """One tick towards the first target of ``targets`` (twist feed-forward from its velocity)."""
        twist = np.concatenate([targets.vel[:, 0], np.zeros_like(targets.vel[:, 0])], axis=1)
        orientation = any(self.task.rot_mask)
        self.step(t, targets.pos[:, 0], targets.quat[:, 0] if orientation else None, twist)

    def solve(self, t: float, qps: QPBatch) -> tuple[np.ndarray, np.ndarray]:
        """Solve per environment -> (qdot (n_envs, n), solved (n_envs,)); a failure leaves qdot = 0."""
        n_envs, n = len(qps), self.robot.n_dofs
        qdot, ok = np.zeros((n_envs, n)), np.zeros(n_envs, bool)
        for env in range(n_envs):
            sol = self.solvers[env].solve(qps[env])
            ok[env] = sol.solved
            if sol.solved:
                qdot[env] = sol.qdot
            elif self._failing[env] is None:
                log.warning("env %d: QP %s at t=%.3f s; commanding a safe stop", env, sol.status, t)
            self._failing[env] = None if sol.solved else sol.status
        return qdot, ok

    def distance_rows(self, q: np.ndarray) -> DistanceRows:
        """PyBullet's close pairs of every environment at q (n_envs, n_dofs), as rows (none if unwatched)."""
        if self.collisions is None:
            return DistanceRows.empty(q.shape[1])
        return distance_rows(self.robot, self.collisions, q, self.box_ids)

    @staticmethod
    def _active(qps: QPBatch, qdot: np.ndarray, ok: np.ndarray, rows: DistanceRows,
                tol: float = 1e-6) -> tuple[np.ndarray, list[list[str]], np.ndarray]:
        """Constraint rows at a bound per solved environment: (count (n_envs,), collision-row labels, and
        the smallest watched distance (n_envs,) [m], inf where none)."""
        n_envs, n = qdot.shape
        at = rows_at_bound(qps.A, qps.l, qps.u, qdot, tol) & ok[:, None]
        names: list[list[str]] = [[] for _ in range(n_envs)]
        dmin = np.full(n_envs, np.inf)
        if len(rows):
            env = np.zeros(len(rows), dtype=int) if rows.env is None else rows.env
            first = np.searchsorted(env, env)  # each environment's rows are grouped, closest first
            dmin[env[first]] = rows.distance[first]
            for k in np.flatnonzero(at[env, n + np.arange(len(rows)) - first]):
                names[env[k]].append(rows.labels[k])
        return at.sum(axis=1), names, dmin


class PoseIKController:
    """One batched pose-IK call for every environment per tick (Genesis' batched IK example).

    Args:
        robot: The built robot.
        links: Link names: one (pose IK) or several (multi-link IK, one target each).
        pos_mask, rot_mask: IK masks. mode: 'control' (motors) or 'kinematic' (set the state).
        dt: Control tick [s]. ik_options: IKOptions fields (tolerances, iterations, restarts).
    """

    def __init__(self, robot: Robot, links: list[str], pos_mask=(True, True, True), rot_mask=(True, True, True),
                 mode: str = "control", dt: float = 1.0 / 240.0, stall_window: int = 120, **ik_options):
        self.robot, self.links, self.mode, self.dt = robot, list(links), mode, dt
        self.masks = dict(pos_mask=tuple(pos_mask), rot_mask=tuple(rot_mask))
        self.ik_options = ik_options
        self.stalls = StallDetector(robot.n_envs, stall_window)
        self.telemetry = TelemetryLog()
        self._q_prev: np.ndarray | None = None

    def track(self, t: float, targets: Targets) -> None:
        robot = self.robot
        q_now = robot.read_states()[0]
        pos, quat = robot.unbatch(targets.pos), robot.unbatch(targets.quat)
        kwargs = dict(init_qpos=robot.unbatch(q_now), return_info=True, **self.masks, **self.ik_options)
        if len(self.links) == 1:
            info = robot.inverse_kinematics(self.links[0], pos[..., 0, :], quat[..., 0, :], **kwargs)
        else:
            info = robot.inverse_kinematics_multilink(self.links, [pos[..., i, :] for i in range(len(self.links))],
                                                      [quat[..., i, :] for i in range(len(self.links))], **kwargs)
        q = info.q.reshape(robot.n_envs, robot.n_dofs)
        if self.mode == "kinematic":
            robot.set_qpos(robot.unbatch(q))
        else:
            qdot = np.zeros_like(q) if self._q_prev is None else (q - self._q_prev) / self.dt
            robot.control_dofs_position(robot.unbatch(q), velocity=robot.unbatch(qdot))
        self._q_prev = q
        self._record(t, targets, np.atleast_1d(info.converged))

    def _record(self, t: float, targets: Targets, converged: np.ndarray) -> None:
        """Tracking errors of the measured state (not of the IK answer) against the targets."""
        robot = self.robot
        q = robot.read_states()[0]
        idx = [robot.model.link_index(l) for l in self.links]
        pos, quat = robot.forward_kinematics(robot.unbatch(q), links_idx_local=idx)
        pos, quat = pos.reshape(robot.n_envs, len(idx), 3), quat.reshape(robot.n_envs, len(idx), 4)
        mask = np.array(self.masks["pos_mask"])
        pos_err = np.linalg.norm((pos - targets.pos) * mask, axis=-1).max(axis=1)
        rot_err = _masked_rotation_error(quat, targets.quat, self.masks["rot_mask"]).max(axis=1)
        stalled = self.stalls.update(pos_err, targets.pos[:, 0])
        n = robot.n_envs
        self.telemetry.record(t, pos_err, rot_err, converged, np.ones(n), np.zeros(n, int), np.full(n, np.inf),
                              stalled, [[] for _ in range(n)])


def _masked_rotation_error(quat: np.ndarray, quat_target: np.ndarray, rot_mask) -> np.ndarray:
    """Angle [rad] between orientations, or between the single masked axis when one is selected."""
    from app.kinematics.rotations import quat_conjugate, quat_log, quat_multiply, quat_to_matrix

    n_true = int(np.sum(rot_mask))
    if n_true == 0:
        return np.zeros(quat.shape[:-1])
    if n_true == 1:
        k = int(np.argmax(rot_mask))
        a, b = quat_to_matrix(quat)[..., :, k], quat_to_matrix(quat_target)[..., :, k]
        return np.arccos(np.clip(np.sum(a * b, axis=-1), -1.0, 1.0))
    return np.linalg.norm(quat_log(quat_multiply(quat_target, quat_conjugate(quat))), axis=-1)
