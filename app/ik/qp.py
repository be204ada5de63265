"""Velocity QP of one control tick: build it as plain matrices, solve it with warm OSQP workspaces.

Decision variable: joint velocities qdot (n_dofs) [rad/s or m/s].

    minimise   1/2 |W (J qdot - a V)|^2 + eps/2 |N (qdot - qdot_posture)|^2 + mu/2 |qdot|^2
    subject to lo <= G qdot <= hi   (velocity and position limits, collision rows)

a in [0, 1] scales the desired twist V down to what the joint box allows along the damped
least-squares direction J^+ V, before the solve: an infeasible twist keeps its direction and loses
speed (exactly, when only the box binds), and where collision rows bind the least-squares cost
lets the motion slide along the obstacle instead of stopping. (A speed-scale variable inside the
QP, tried first, preserved the direction too but preferred to stop dead at any obstacle.)
N = I - J_w^+ J_w projects onto the tasks' nullspace: the posture acts only where the tasks do not
look.

:func:`build_qp` returns the matrices; :class:`QPSolver` keeps one OSQP workspace whose sparsity
pattern is fixed at construction (dense P upper triangle, dense constraint block of a fixed
number of rows) and only updates its data each tick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import osqp
from scipy import sparse

from app.errors import InputError

INF = 1e20  # OSQP's infinity


@dataclass(frozen=True)
class QP:
    """OSQP form: minimise 1/2 x^T P x + c^T x subject to l <= A x <= u.

    Attributes:
        P: Shape (n_x, n_x), symmetric positive semi-definite.
        c: Shape (n_x,).
        A: Shape (n_rows, n_x).
        l, u: Shape (n_rows,); +-INF where unbounded.
        scale: The factor a applied to the tasks' twist.
    """

    P: np.ndarray
    c: np.ndarray
    A: np.ndarray
    l: np.ndarray
    u: np.ndarray
    scale: float = 1.0


@dataclass(frozen=True)
class TaskTerm:
    """One weighted task: rows of J qdot that should equal s V.

    Attributes:
        J: Shape (m, n_dofs). V: Shape (m,). weights: Shape (m,), 0 drops a row.
    """

    J: np.ndarray
    V: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True)
class Inequalities:
    """Rows lo <= G qdot <= hi. G: (k, n_dofs), lo and hi: (k,)."""

    G: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def nullspace_projector(J: np.ndarray, damping: float = 1e-4) -> np.ndarray:
    """I - J^+ J with a damped pseudo-inverse. J (m, n) -> (n, n)."""
    n = J.shape[1]
    if J.shape[0] == 0:
        return np.eye(n)
    pinv = J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(J.shape[0]), np.eye(J.shape[0]))
    return np.eye(n) - pinv @ J


def feasible_scale(J_w: np.ndarray, V_w: np.ndarray, lo: np.ndarray, hi: np.ndarray, damping: float = 1e-3,
                   pinned_ratio: float = 0.05) -> float:
    """Largest a in [0, 1] with a qdot* inside the box [lo, hi], qdot* = J_w^+ V_w.

    A joint that the box holds to less than ``pinned_ratio`` of the speed qdot* asks of it (one at
    a position limit) is dropped and qdot* recomputed without it, so that the other joints carry the
    motion instead of the whole task stopping. J_w (m, n), V_w (m,), lo/hi (n,).
    """
    if J_w.shape[0] == 0:
        return 1.0
    free = np.ones(J_w.shape[1], dtype=bool)
    for _ in range(J_w.shape[1]):
        Jf = J_w * free
        qdot = Jf.T @ np.linalg.solve(Jf @ Jf.T + damping**2 * np.eye(J_w.shape[0]), V_w)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(qdot > 0, hi / qdot, np.where(qdot < 0, lo / qdot, np.inf))
        ratio = np.where(free & ~np.isnan(ratio), ratio, np.inf)
        pinned = ratio < pinned_ratio
        if not pinned.any():
            break
        free &= ~pinned
    return float(np.clip(np.min(ratio, initial=1.0), 0.0, 1.0))


def build_qp(tasks: list[TaskTerm], limits: list[Inequalities], n_dofs: int, *, box: Inequalities | None = None,
             posture: np.ndarray | None = None, posture_weight: float = 1e-3, damping: float = 1e-9,
             n_rows: int | None = None) -> QP:
    """Assemble the tick's QP (see the module docstring). Pure numpy, no solver.

    Args:
        tasks: Weighted task rows, stacked.
        limits: Inequality rows on qdot, stacked; padded with free rows up to ``n_rows``.
        box: Joint velocity box (G = I) used to scale the tasks' twist; None for no scaling.
        posture: Preferred joint velocity qdot_posture (n_dofs,); None for zero.
        posture_weight: eps. damping: mu.
        n_rows: Total constraint rows (fixed size for a warm workspace).
    Returns:
        QP over qdot, with the applied twist scale a in ``QP.scale``.
    """
    J_w = np.vstack([t.J * t.weights[:, None] for t in tasks]) if tasks else np.zeros((0, n_dofs))
    V_w = np.concatenate([t.V * t.weights for t in tasks]) if tasks else np.zeros(0)
    scale = 1.0 if box is None else feasible_scale(J_w, V_w, box.lo, box.hi)
    N = nullspace_projector(J_w)
    NtN = N.T @ N
    P = J_w.T @ J_w + posture_weight * NtN + damping * np.eye(n_dofs)
    c = -J_w.T @ (scale * V_w)
    if posture is not None:
        c -= posture_weight * NtN @ posture
    G = np.vstack([lim.G for lim in limits]) if limits else np.zeros((0, n_dofs))
    lo = np.concatenate([lim.lo for lim in limits]) if limits else np.zeros(0)
    hi = np.concatenate([lim.hi for lim in limits]) if limits else np.zeros(0)
    n_rows = len(G) if n_rows is None else n_rows
    if len(G) > n_rows:
        raise InputError(f"{len(G)} constraint rows exceed the QP's fixed size of {n_rows}")
    A = np.zeros((n_rows, n_dofs))
    A[:len(G)] = G
    l = np.full(n_rows, -INF)
    u = np.full(n_rows, INF)
    l[:len(G)], u[:len(G)] = np.maximum(lo, -INF), np.minimum(hi, INF)
    return QP(P, c, A, l, u, scale)


@dataclass(frozen=True)
class QPSolution:
    """qdot if solved (zeros otherwise); ``scale`` is the twist scale; ``solved`` is True only for 'solved'."""

    qdot: np.ndarray
    scale: float
    solved: bool
    status: str
    iterations: int


class QPSolver:
    """One warm OSQP workspace for QPs of a fixed size (one per environment).

    Args:
        n_x: Number of variables. n_rows: Number of constraint rows (all dense).
        eps: OSQP's absolute and relative tolerances. max_iter: OSQP iteration cap.
    """

    def __init__(self, n_x: int, n_rows: int, eps: float = 1e-6, max_iter: int = 4000):
        self.n_x, self.n_rows = n_x, n_rows
        self._triu = np.triu_indices(n_x)
        order = np.lexsort((self._triu[0], self._triu[1]))  # CSC: column by column, rows ascending
        self._triu = (self._triu[0][order], self._triu[1][order])
        P0 = sparse.csc_matrix((np.ones(len(self._triu[0])), self._triu), shape=(n_x, n_x))
        rows, cols = np.meshgrid(np.arange(n_rows), np.arange(n_x), indexing="ij")
        self._a_order = np.lexsort((rows.ravel(), cols.ravel()))
        self._a_idx = (rows.ravel()[self._a_order], cols.ravel()[self._a_order])
        A0 = sparse.csc_matrix((np.ones(n_rows * n_x), self._a_idx), shape=(n_rows, n_x))
        self._solver = osqp.OSQP()
        self._solver.setup(P=P0, q=np.zeros(n_x), A=A0, l=-np.ones(n_rows), u=np.ones(n_rows), verbose=False,
                           warm_starting=True, polishing=False, eps_abs=eps, eps_rel=eps, max_iter=max_iter)

    def solve(self, qp: QP) -> QPSolution:
        """Update the workspace with ``qp``'s data and solve. Never returns NaN: a failure gives zeros."""
        if qp.P.shape != (self.n_x, self.n_x) or qp.A.shape != (self.n_rows, self.n_x):
            raise InputError(f"QP of shape P{qp.P.shape}, A{qp.A.shape} does not fit this workspace "
                             f"({self.n_x} variables, {self.n_rows} rows)")
        self._solver.update(Px=qp.P[self._triu], Ax=qp.A[self._a_idx], q=qp.c, l=qp.l, u=qp.u)
        res = self._solver.solve(raise_error=False)
        solved = res.info.status_val == osqp.SolverStatus.OSQP_SOLVED and np.all(np.isfinite(res.x))
        if not solved:
            return QPSolution(np.zeros(self.n_x), 0.0, False, str(res.info.status), int(res.info.iter))
        return QPSolution(res.x.copy(), qp.scale, True, str(res.info.status), int(res.info.iter))
