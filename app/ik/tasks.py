"""Velocity-level tasks: a link frame to track, and a posture to prefer.

Each task has ``compute_error`` and ``compute_jacobian`` (mink's split); the QP builder turns
them into weighted rows J qdot = s V with V = gain * error + feed-forward.
"""

from __future__ import annotations

import numpy as np

from app.errors import InputError
from app.ik._residual import ROT_NONE, residual_batch
from app.ik.qp import TaskTerm
from app.ik.targets import PoseTargets
from app.kinematics.model import LinkRef, RobotModel
from app.validation import as_rotation_matrices, as_vectors


class FrameTask:
    """Track a pose of a link (or a point on it) with the IK masks, for a batch of environments.

    Args:
        model: The robot.
        link: Link name.
        gain: Proportional gain [1/s] from pose error to desired twist.
        pos_mask, rot_mask: As in pose IK (base-frame position axes; link axes to align).
        local_point: Point in the link frame [m]. Shape (3,).
        char_length: Rotation rows are weighted by this length [m] against position rows.
        weight: Overall weight of the task.
    """

    def __init__(self, model: RobotModel, link: LinkRef, gain: float = 10.0, pos_mask=(True, True, True),
                 rot_mask=(True, True, True), local_point=None, char_length: float = 0.1, weight: float = 1.0):
        self.model, self.link = model, link
        self.gain, self.char_length, self.weight = float(gain), float(char_length), float(weight)
        self.pos_mask, self.rot_mask, self.local_point = pos_mask, rot_mask, local_point
        lp = None if local_point is None else [local_point]  # link, masks and point checked once, here
        t = PoseTargets.build(model, [link], [np.zeros(3)], [np.array([1.0, 0.0, 0.0, 0.0])], lp, pos_mask, rot_mask)
        self._tables = {True: t.task_tables,  # with / without a quat
                        False: t.task_tables._replace(rot_mode=np.full(1, ROT_NONE, dtype=np.int64))}
        self._ff_mask = np.concatenate([t.pos_mask[0], np.ones(3)])
        self._w = self.weight * np.array([1.0, 1.0, 1.0] + [self.char_length] * 3)
        self._target: tuple | None = None  # (pos (B, 1, 3), rot (B, 1, 3, 3), task tables)
        self._feedforward: np.ndarray | None = None

    def __repr__(self) -> str:
        return (f"FrameTask(link={self.link!r}, gain={self.gain}, weight={self.weight}, "
                f"pos_mask={tuple(self.pos_mask)}, rot_mask={tuple(self.rot_mask)})")

    def set_target(self, pos: object, quat: object | None, twist: object | None = None) -> None:
        """Targets in the base frame: pos (B, 3) [m], quat (B, 4) wxyz or None; twist (B, 6) feed-forward."""
        self.set_target_frames(as_vectors(pos, "pos", 3).reshape(-1, 3),
                               None if quat is None else as_rotation_matrices(quat, "quat").reshape(-1, 3, 3),
                               None if twist is None else as_vectors(twist, "twist", 6).reshape(-1, 6))

    def set_target_frames(self, pos: np.ndarray, rot: np.ndarray | None, twist: np.ndarray | None = None) -> None:
        """:meth:`set_target` for checked arrays: pos (B, 3) [m], rotation matrices rot (B, 3, 3) or None,
        twist (B, 6) or None, all finite, in the base frame."""
        tables = self._tables[rot is not None]
        if rot is None:
            rot = np.broadcast_to(np.eye(3), (len(pos), 3, 3))
        elif len(rot) != len(pos):
            raise InputError(f"pos and quat must have the same batch size, got {len(pos)} and {len(rot)}")
        self._target = (np.ascontiguousarray(pos[:, None], dtype=float), np.ascontiguousarray(rot[:, None], dtype=float),
                        tables)
        self._feedforward = twist

    def _target_for(self, batch: int) -> tuple:
        """(pos, rot, task tables) of the current targets, checked to be set for ``batch`` configurations."""
        if self._target is None:
            raise RuntimeError("FrameTask.set_target must be called before the task is used")
        if len(self._target[0]) != batch:
            raise InputError(f"the task has targets for {len(self._target[0])} configurations, got {batch}")
        return self._target

    def compute_error_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masked error (target minus current) (B, 6) and Jacobian (B, 6, n_dofs) at q (B, n_dofs)."""
        pos, rot, tables = self._target_for(len(q))
        err, J = residual_batch(np.ascontiguousarray(q, dtype=float), self.model.fk_tables,
                                self.model.jacobian_tables, pos, rot, tables, True)
        return err[:, 0], J

    def kernel_args(self, batch: int) -> tuple:
        """The targets and gains as app.ik._tick_kernel.build_tick takes them, for ``batch`` configurations."""
        pos, rot, tables = self._target_for(batch)
        ff = np.zeros((batch, 6)) if self._feedforward is None else np.ascontiguousarray(
            np.broadcast_to(self._feedforward, (batch, 6)))
        return pos, rot, tables, ff, self._ff_mask, self.gain, self._w

    def compute_error(self, q: np.ndarray) -> np.ndarray:
        """Position error [m] then rotation-vector error [rad], masked. Shape (B, 6)."""
        return self.compute_error_and_jacobian(q)[0]

    def compute_jacobian(self, q: np.ndarray) -> np.ndarray:
        """Jacobian of the tracked (masked) quantities. Shape (B, 6, n_dofs)."""
        return self.compute_error_and_jacobian(q)[1]

    def row_weights(self) -> np.ndarray:
        """Weights of the six rows: ``weight``, times ``char_length`` on the rotation rows. Shape (6,)."""
        return self._w.copy()

    def velocity_rows(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(error (B, 6), J (B, 6, n_dofs), V (B, 6)) with V = gain * error + feed-forward (unweighted)."""
        err, J = self.compute_error_and_jacobian(q)
        V = self.gain * err
        if self._feedforward is not None:
            V = V + self._feedforward * self._ff_mask
        return err, J, V

    def terms(self, q: np.ndarray) -> list[TaskTerm]:
        """One weighted task term per environment: V = gain * error + feed-forward."""
        _, J, V = self.velocity_rows(q)
        return [TaskTerm(J[b], V[b], self.row_weights()) for b in range(len(q))]
