"""User targets -> one normalised batch of pose targets for the IK kernels.

Conventions: positions in the model's base frame [m]; quaternions (w, x, y, z). ``pos_mask``
selects base-frame axes of the position; ``rot_mask`` selects axes of the link frame that
must align with the target's, as in Genesis: one True aligns that axis only (rotation about
it is free), three fix the whole orientation, none ignores orientation; two is an error. A
link whose position (or quaternion) is None has that part unconstrained.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app.errors import InputError
from app.ik._residual import ROT_AXIS, ROT_FULL, ROT_NONE
from app.ik.ik_tables import TaskTables
from app.kinematics.model import KinematicModel
from app.validation import as_float_array, as_mask, as_rot_mask, as_rotation_matrices, as_vectors


def batch_shape_of(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The common batch shape of targets and start configurations: () or (n,), else InputError."""
    try:
        batch = np.broadcast_shapes(*shapes)
    except ValueError:
        raise InputError(f"batch shapes of targets and init_qpos do not match: {list(shapes)}") from None
    if len(batch) > 1:
        raise InputError(f"targets may have at most one batch dimension, got batch shape {batch}")
    return batch


def as_rows(arr: np.ndarray, batch: tuple[int, ...], trailing: tuple[int, ...]) -> np.ndarray:
    """``arr`` of shape ([...,] *trailing) broadcast to ``batch``, as (prod(batch), *trailing)."""
    if arr.shape != batch + trailing:
        arr = np.broadcast_to(arr, batch + trailing)
    return arr.reshape((math.prod(batch),) + trailing)


def as_frame(frame: object) -> np.ndarray:
    """A rotation matrix (3, 3) (None: identity); InputError unless orthonormal with determinant 1."""
    if frame is None:
        return np.eye(3)
    R = as_float_array(frame, "frame_rotation")
    if R.shape != (3, 3) or not np.all(np.isfinite(R)) or not np.allclose(R @ R.T, np.eye(3), atol=1e-9) \
            or np.linalg.det(R) < 0:
        raise InputError(f"frame_rotation must be a rotation matrix (3, 3), got {np.array2string(R, precision=3)}")
    return np.ascontiguousarray(R)


@dataclass(frozen=True)
class PoseTargets:
    """Targets of several links for a batch of problems.

    Attributes:
        links: Link indices. Shape (n_links,).
        pos: Target positions. Shape (B, n_links, 3).
        rot: Target rotations (identity where unused). Shape (B, n_links, 3, 3).
        rot_mode: ROT_NONE, ROT_AXIS or ROT_FULL per link. Shape (n_links,).
        local_points: Point on each link, link frame [m]. Shape (n_links, 3).
        pos_mask: Base-frame position axes to match, per link (False where no position). Shape (n_links, 3).
        rot_axis: Link axis to align when rot_mode is ROT_AXIS (0, 1 or 2).
        batch_shape: Leading shape of the user's input: () for one problem, (n,) for n.
        frame: Rotation from the base frame to the frame in which pos_mask applies and errors are
            expressed. Shape (3, 3); identity by default.
    """

    links: np.ndarray
    pos: np.ndarray
    rot: np.ndarray
    rot_mode: np.ndarray
    local_points: np.ndarray
    pos_mask: np.ndarray
    rot_axis: int
    batch_shape: tuple[int, ...]
    frame: np.ndarray = field(default_factory=lambda: np.eye(3))

    @classmethod
    def build(cls, model: KinematicModel, links: Sequence, poss: Sequence, quats: Sequence, local_points=None,
              pos_mask=(True, True, True), rot_mask=(True, True, True), batch_hint: tuple[int, ...] = (),
              frame: object = None) -> PoseTargets:
        """Validate and broadcast user targets. ``batch_hint`` is the batch shape of ``init_qpos``; ``frame``
        (3, 3) the mask frame's rotation (None: the base frame)."""
        if not (len(links) == len(poss) == len(quats)):
            raise InputError(f"links, poss and quats must have the same length, got {len(links)}, {len(poss)}, {len(quats)}")
        if len(links) == 0:
            raise InputError("at least one link target is needed")
        if local_points is not None and len(local_points) != len(links):
            raise InputError(f"local_points needs one entry per link ({len(links)}), got {len(local_points)}")
        pos_mask, rot_mask = as_mask(pos_mask, "pos_mask"), as_rot_mask(rot_mask)
        n_rot = int(rot_mask.sum())
        idx = np.array([model.link_index(l) for l in links], dtype=np.int64)
        for i, (p, q) in enumerate(zip(poss, quats)):
            if p is None and q is None:
                raise InputError(f"link {links[i]!r}: give its position, its quaternion or both (both are None)")
        pos = [None if p is None else as_vectors(p, f"poss[{i}]", 3) for i, p in enumerate(poss)]
        rots = [None if q is None else as_rotation_matrices(q, f"quats[{i}]") for i, q in enumerate(quats)]
        batch_shape = batch_shape_of([p.shape[:-1] for p in pos if p is not None]
                                     + [r.shape[:-2] for r in rots if r is not None] + [batch_hint])
        mode = np.array([ROT_NONE if (r is None or n_rot == 0) else ROT_AXIS if n_rot == 1 else ROT_FULL for r in rots],
                        dtype=np.int64)
        rot = np.stack([as_rows(np.eye(3) if r is None else r, batch_shape, (3, 3)) for r in rots],
                       axis=1)
        pos_b = np.stack([as_rows(np.zeros(3) if p is None else p, batch_shape, (3,)) for p in pos], axis=1)
        link_pos_mask = np.array([pos_mask & (p is not None) for p in pos], dtype=bool).reshape(len(links), 3)
        if not link_pos_mask.any() and (mode == ROT_NONE).all():
            raise InputError("nothing to solve: no position axis (pos_mask, poss) and no orientation (rot_mask, "
                             "quats) is constrained")
        lp = np.zeros((len(links), 3)) if local_points is None else np.array(
            [np.zeros(3) if p is None else as_vectors(p, f"local_points[{i}]", 3) for i, p in enumerate(local_points)])
        if lp.shape != (len(links), 3):
            raise InputError(f"each local point must have shape (3,), got {lp.shape}")
        axis = int(np.argmax(rot_mask)) if n_rot == 1 else 2
        return cls(idx, np.ascontiguousarray(pos_b), np.ascontiguousarray(rot), mode, lp, link_pos_mask, axis,
                   batch_shape, as_frame(frame))

    @property
    def task_tables(self) -> TaskTables:
        """What the IK kernels take."""
        return TaskTables(self.links, self.local_points, self.rot_mode, self.rot_axis, self.pos_mask, self.frame)
