"""The frame task: a link frame (or a point on it) tracks a pose target, with the IK masks.

Rows: W J qdot = W (gain * error + feed-forward), error = target minus current (the masked
pose residual of app.ik._residual), W = weight * (1, 1, 1, L, L, L) with the characteristic
length L on the rotation rows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from app.errors import InputError
from app.ik._residual import ROT_NONE, residual_batch, residual_one, task_jacobian_one
from app.ik.ik_tables import TaskTables
from app.ik.targets import PoseTargets
from app.kinematics.fk_tables import FKTables, JacobianTables
from app.kinematics.model import KinematicModel, LinkRef
from app.validation import as_rotation_matrices, as_vectors


class FrameParams(NamedTuple):
    """The frame task as the compiled builder takes it (B configurations; ``active`` False: no rows).

    Attributes:
        fk, jac: The model's tables. tables: The masked task (one link).
        tgt_pos: (B, 1, 3) [m]. tgt_rot: (B, 1, 3, 3). ff: Feed-forward twist (B, 6). ff_mask: (6,).
        gain: [1/s]. w: Row weights (6,).
    """

    active: bool
    fk: FKTables
    jac: JacobianTables
    tables: TaskTables
    tgt_pos: np.ndarray
    tgt_rot: np.ndarray
    ff: np.ndarray
    ff_mask: np.ndarray
    gain: float
    w: np.ndarray


@njit(cache=True)
def frame_rows_at(fp, b, R, p, err, J, V):
    """Rows of configuration b into J (6, n), V (6,) (weighted) and the task error err (1, 6), from the link
    frames R (L, 3, 3), p (L, 3) at its configuration (computed once for every frame task of the model)."""
    residual_one(R, p, fp.tgt_pos[b], fp.tgt_rot[b], fp.tables, err)
    task_jacobian_one(R, p, fp.jac, fp.tables, J)
    for i in range(6):
        V[i] = (fp.gain * err[0, i] + fp.ff[b, i] * fp.ff_mask[i]) * fp.w[i]
        J[i, :] *= fp.w[i]


def inactive_frame(batch: int) -> FrameParams:
    """A frame slot with no rows (its tables describe a one-link, motionless model). Its tables are read-only as a
    model's are: numba compiles per argument type, and a read-only array is a type of its own."""
    fk = FKTables(np.full(1, -1), np.eye(3)[None], np.zeros((1, 3)), np.full(1, -1), np.zeros((0, 3)),
                  np.zeros(0, dtype=bool))
    jac = JacobianTables(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0, dtype=bool),
                         np.zeros((1, 0), dtype=bool))
    for arr in (*fk, *jac):
        arr.setflags(write=False)
    tables = TaskTables(np.zeros(1, dtype=np.int64), np.zeros((1, 3)), np.zeros(1, dtype=np.int64), 2,
                        np.zeros((1, 3), dtype=bool), np.eye(3))
    return FrameParams(False, fk, jac, tables, np.zeros((batch, 1, 3)), np.tile(np.eye(3), (batch, 1, 1, 1)),
                       np.zeros((batch, 6)), np.zeros(6), 0.0, np.zeros(6))


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

    slot = "frame"

    def __init__(self, model: KinematicModel, link: LinkRef, gain: float = 10.0, pos_mask=(True, True, True),
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
        self._params: FrameParams | None = None

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
        B = len(pos)
        if rot is not None and len(rot) != B:
            raise InputError(f"pos and quat must have the same batch size, got {B} and {len(rot)}")
        if twist is not None and len(twist) not in (1, B):
            raise InputError(f"twist needs one row per target ({B}) or one for all, got {len(twist)}")
        p = self._params
        if p is None or len(p.tgt_pos) != B:  # arrays made once per batch size, filled every tick
            m = self.model
            p = FrameParams(True, m.fk_tables, m.jacobian_tables, tables, np.empty((B, 1, 3)),
                            np.empty((B, 1, 3, 3)), np.zeros((B, 6)), self._ff_mask, self.gain, self._w)
        p.tgt_pos[:, 0] = pos
        p.tgt_rot[:, 0] = np.eye(3) if rot is None else rot
        p.ff[:] = 0.0 if twist is None else twist
        self._params = p if p.tables is tables else p._replace(tables=tables)

    def params(self, batch: int) -> FrameParams:
        """The targets and gains as the compiled builder takes them, checked to be set for ``batch`` configurations."""
        if self._params is None:
            raise RuntimeError("FrameTask.set_target must be called before the task is used")
        if len(self._params.tgt_pos) != batch:
            raise InputError(f"the task has targets for {len(self._params.tgt_pos)} configurations, got {batch}")
        return self._params

    def compute_error_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masked error (target minus current) (B, 6) and Jacobian (B, 6, n_dofs) at q (B, n_dofs), unweighted."""
        fp = self.params(len(q))
        err, J = residual_batch(np.ascontiguousarray(q, dtype=float), fp.fk, fp.jac, fp.tgt_pos, fp.tgt_rot,
                                fp.tables, True)
        return err[:, 0], J

    def compute_error(self, q: np.ndarray) -> np.ndarray:
        """Position error [m] then rotation-vector error [rad], masked. Shape (B, 6)."""
        return self.compute_error_and_jacobian(q)[0]

    def compute_jacobian(self, q: np.ndarray) -> np.ndarray:
        """Jacobian of the tracked (masked) quantities. Shape (B, 6, n_dofs)."""
        return self.compute_error_and_jacobian(q)[1]

    def row_weights(self) -> np.ndarray:
        """Weights of the six rows: ``weight``, times ``char_length`` on the rotation rows. Shape (6,)."""
        return self._w.copy()
