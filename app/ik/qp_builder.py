"""The one QP builder: every environment's tick QP from the tasks and limits given, in one compiled call.

Slots, in the order the compiled :func:`build_batch` takes them (how several pieces of one slot combine,
and the errors for pieces that cannot: app.ik.qp_pieces):

    frame         app.ik.tasks.frame.FrameTask          task rows (6 per task, masked, weighted), any number
    rows_task     app.ik.tasks.given_rows.RowsTask            task rows given precomputed
    posture       app.ik.tasks.posture.PostureTask      nullspace posture velocity
    joint_box     app.ik.limits.joint_box.JointLimits   velocity box from the joint limits (first n rows), any number
    velocity_box  app.ik.limits.velocity_box.VelocityBox  a given box, intersected with the joint boxes
    distance      app.ik.limits.distance.CollisionLimit  collision rows (closest first, up to K per env)
    rows_limit    app.ik.limits.given_rows.RowsLimit          given rows, after the collision rows

A slot left empty contributes nothing. The controller tick, :func:`build_qp` and the tests all
come here; the per-row kernels are the tasks' and limits' own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from app.errors import InputError
from app.ik._qp_exact import exact_solution_one
from app.ik._qp_kernel import OSQP_INF, assemble_one
from app.ik.limits.distance import distance_row_one, no_distance_rows
from app.ik.limits.given_rows import no_limit_rows
from app.ik.limits.joint_box import inactive_joint_box, joint_box_one
from app.ik.limits.velocity_box import inactive_velocity_box
from app.ik.qp import DAMPING, QPBatch
from app.ik.qp_pieces import SLOTS, combined_slots
from app.ik.tasks.frame import frame_rows_at, inactive_frame
from app.ik.tasks.given_rows import no_rows
from app.ik.tasks.posture import PostureParams, posture_velocity_one
from app.kernels.dispatch import EntryPoints, kernel_array
from app.kinematics._fk_kernels import frames_one

__all__ = ["SLOTS", "QPBuilder", "build_batch", "build_qp"]


@njit(cache=True)
def _further_rows(b, distance, rows_limit, r, G, g_lo, g_hi):
    """Environment b's collision rows (from row r of the grouped distance rows) then its given rows into
    G, g_lo, g_hi (K rows kept); returns (rows used, the next distance row)."""
    K, count = G.shape[0], 0
    while r < distance.env.shape[0] and distance.env[r] == b:
        if count < K:
            g_lo[count] = distance_row_one(distance, r, G[count])
            g_hi[count] = OSQP_INF
            count += 1
        r += 1
    for k in range(rows_limit.count[b]):
        if count < K:
            G[count, :] = rows_limit.G[b, k]
            g_lo[count] = rows_limit.lo[b, k]
            g_hi[count] = rows_limit.hi[b, k]
            count += 1
    return count, r


@njit(cache=True)
def _frame_rows(frames, b, q, R, p, err, J, V):
    """Every frame task's rows of configuration b at q (n,) into J, V from row 0 (6 a task, weighted) and its
    error into err (T, 6); the link frames (R, p scratch) computed once for all (one model)."""
    if not frames[0].active:
        return
    frames_one(q, frames[0].fk, R, p)
    for k in range(len(frames)):
        frame_rows_at(frames[k], b, R, p, err[k:k + 1], J[6 * k:6 * k + 6], V[6 * k:6 * k + 6])


@njit(cache=True)
def build_batch(q, v, frames, rows_task, posture, joint_boxes, velocity_box, distance, rows_limit, K, damping):
    """Every environment's QP.

    Args:
        q, v: Joint positions and measured velocities. Shapes (B, n).
        frames: The frame tasks' parameters (a tuple; one inactive entry: none). joint_boxes: likewise.
        rows_task ... rows_limit: The other slots' parameters (see the module docstring).
        K: Further rows per environment in the QP (padding). damping: mu of the cost.
    Returns:
        (P, c, A, l, u, scale, x_exact, exact, frame task errors (B, T, 6)) as QPBatch's fields.
    """
    B, n = q.shape
    T = len(frames) if frames[0].active else 0
    m0 = 6 * T
    m = m0 + rows_task.J.shape[1]
    L = frames[0].fk.parent.shape[0]
    P, c, A = np.empty((B, n, n)), np.empty((B, n)), np.zeros((B, n + K, n))
    l, u, scale = np.empty((B, n + K)), np.empty((B, n + K)), np.ones(B)
    x_exact, exact, err = np.zeros((B, n)), np.zeros(B, dtype=np.bool_), np.zeros((B, T, 6))
    R, p, N = np.empty((L, 3, 3)), np.empty((L, 3)), np.empty((n, n))
    J, V, lo, hi, post = np.zeros((m, n)), np.zeros(m), np.empty(n), np.empty(n), np.zeros(n)
    G, g_lo, g_hi = np.zeros((K, n)), np.empty(K), np.full(K, OSQP_INF)
    scale_box = velocity_box.active
    for jb in joint_boxes:
        scale_box = scale_box or jb.active
    r = 0
    for b in range(B):
        _frame_rows(frames, b, q[b], R, p, err[b], J, V)
        for i in range(m - m0):
            J[m0 + i, :] = rows_task.J[b, i]
            V[m0 + i] = rows_task.V[b, i]
        lo[:] = -OSQP_INF
        hi[:] = OSQP_INF
        if velocity_box.active:
            lo[:] = velocity_box.lo[b]
            hi[:] = velocity_box.hi[b]
        for jb in joint_boxes:
            if jb.active:
                joint_box_one(jb, q[b], v[b], lo, hi)
        count, r = _further_rows(b, distance, rows_limit, r, G, g_lo, g_hi)
        if posture.weight > 0.0:
            posture_velocity_one(posture, q[b], post)
        scale[b] = assemble_one(J, V, lo, hi, G, g_lo, g_hi, count, post, posture.weight, damping, scale_box, N,
                                P[b], c[b], A[b], l[b], u[b])
        exact[b] = exact_solution_one(P[b], c[b], A[b], l[b], u[b], x_exact[b])
    return P, c, A, l, u, scale, x_exact, exact, err


class QPBuilder:
    """Builds the QPs of B configurations of an n-DOF robot from the tasks and limits given.

    Args:
        n_dofs: Joint velocities. n_rows: Constraint rows of every QP (n_dofs box rows + further rows),
            fixed for warm OSQP workspaces; None: as many as the call needs.
        damping: mu of the cost.
        reuse: Built again and again with arguments of the same types (a controller's tick): the compiled
            builder is then called directly after the first build (app.kernels.dispatch.entry_point), one entry per
            number of frame tasks and joint boxes.
    """

    def __init__(self, n_dofs: int, n_rows: int | None = None, damping: float = DAMPING, reuse: bool = True):
        self.n, self.n_rows, self.damping = int(n_dofs), n_rows, float(damping)
        self._empty: dict[int, dict] = {}
        self._reuse, self._compiled = reuse, EntryPoints()

    def _defaults(self, batch: int) -> dict:
        """The empty slots for ``batch`` configurations (made once per batch size)."""
        if batch not in self._empty:
            n = self.n
            self._empty[batch] = dict(
                frame=(inactive_frame(batch),), rows_task=no_rows(batch, n),
                posture=PostureParams(np.zeros(n), 0.0, 0.0),
                joint_box=(inactive_joint_box(n),), velocity_box=inactive_velocity_box(batch, n),
                distance=no_distance_rows(n), rows_limit=no_limit_rows(batch, n))
        return self._empty[batch]

    def slots(self, batch: int, dt: float, tasks: Sequence, limits: Sequence) -> dict:
        """Each slot's parameters: the given tasks' and limits' where set (several of a slot combined, see
        app.ik.qp_pieces), empty elsewhere."""
        return dict(self._defaults(batch), **combined_slots(self.n, batch, dt, tasks, limits))

    def build(self, q: np.ndarray, v: np.ndarray | None, tasks: Sequence, limits: Sequence, dt: float) -> QPBatch:
        """The QPs at q, v (B, n_dofs) (v None: zeros) for ticks of ``dt`` seconds."""
        q = kernel_array(np.atleast_2d(q))
        v = np.zeros_like(q) if v is None else kernel_array(np.atleast_2d(v))
        if q.shape[1] != self.n or v.shape != q.shape:
            raise InputError(f"q and v must have shape (B, {self.n}), got {q.shape} and {v.shape}")
        return self.build_slots(q, v, self.slots(len(q), dt, tasks, limits))

    def build_slots(self, q: np.ndarray, v: np.ndarray, s: dict) -> QPBatch:
        """:meth:`build` from checked q, v (B, n_dofs) (C-contiguous float64) and every slot's parameters
        (:meth:`slots`), for a caller that keeps the slots that do not change between ticks (``frame`` and
        ``joint_box`` are tuples of their pieces' parameters)."""
        if self.n_rows is None:
            K = int(np.bincount(s["distance"].env, minlength=len(q)).max(initial=0)) + s["rows_limit"].G.shape[1]
        else:
            K = self.n_rows - self.n
        if s["rows_limit"].G.shape[1] > K:
            raise InputError(f"{self.n + s['rows_limit'].G.shape[1]} constraint rows exceed the QP's fixed size "
                             f"of {self.n + K}")
        args = (q, v, s["frame"], s["rows_task"], s["posture"], s["joint_box"], s["velocity_box"], s["distance"],
                s["rows_limit"], K, self.damping)  # SLOTS' order
        if not self._reuse:
            return QPBatch(*build_batch(*args))
        key = (len(s["frame"]), s["frame"][0].active, len(s["joint_box"]))  # what changes the compiled types
        return QPBatch(*self._compiled(key, build_batch, args))


def build_qp(q: object, v: object | None = None, *, tasks: Sequence = (), limits: Sequence = (), dt: float = 1.0,
             n_rows: int | None = None, damping: float = DAMPING) -> QPBatch:
    """The QPs of configurations q (B, n) or (n,) from tasks and limits (see :class:`QPBuilder`)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    return QPBuilder(q.shape[1], n_rows, damping, reuse=False).build(q, v, tasks, limits, dt)
