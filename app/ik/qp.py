"""Velocity QP of one control tick: build it as plain matrices, solve it with warm OSQP workspaces.

Decision variable x = [qdot (n_dofs), s]: joint velocities [rad/s or m/s] and a task speed scale
s in [0, 1]. The tasks ask J qdot = s V_des, so that an infeasible twist is scaled down along
its own direction instead of being bent by the constraints; (1 - s)^2 is penalised lightly.

    minimise   1/2 |W (J qdot - s V)|^2 + rho/2 (1 - s)^2 + eps/2 |N (qdot - qdot_posture)|^2 + mu/2 |qdot|^2

N = I - J_w^+ J_w projects onto the tasks' nullspace: the posture acts only where the tasks do
not look, so it cannot trade task speed for posture. rho = scale_weight (|W V|^2 + scale_floor^2)
is relative to the task's own size, so that giving up speed costs the same whatever the twist's
magnitude; it is small against the task term (direction kept to O(scale_weight)) and large
against mu. The solver's last variable is s * sqrt(|W V|^2 + scale_floor^2), which keeps the
problem well scaled for OSQP's tolerances.
    subject to lo <= G qdot <= hi   (velocity and position limits, collision rows)
               0 <= s <= 1

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
        s_unit: The last variable is s * s_unit (s is the task speed scale).
    """

    P: np.ndarray
    c: np.ndarray
    A: np.ndarray
    l: np.ndarray
    u: np.ndarray
    s_unit: float = 1.0


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


def build_qp(tasks: list[TaskTerm], limits: list[Inequalities], n_dofs: int, *, posture: np.ndarray | None = None,
             posture_weight: float = 1e-3, damping: float = 1e-9, scale_weight: float = 1e-4,
             scale_floor: float = 0.1, n_rows: int | None = None) -> QP:
    """Assemble the tick's QP (see the module docstring). Pure numpy, no solver.

    Args:
        tasks: Weighted task rows, stacked.
        limits: Inequality rows on qdot, stacked; padded with free rows up to ``n_rows``.
        posture: Preferred joint velocity qdot_posture (n_dofs,); None for zero.
        posture_weight: eps. damping: mu. scale_weight: rho, relative to |W V|^2 + scale_floor^2.
        scale_floor: Speed [m/s] below which giving up speed is priced as at this speed, so the
            posture term cannot stall a nearly converged task.
        n_rows: Total constraint rows besides the bound on s (fixed size for a warm workspace).
    Returns:
        QP over x = [qdot, s], n_x = n_dofs + 1, with n_rows + 1 constraint rows.
    """
    n_x = n_dofs + 1
    P = np.zeros((n_x, n_x))
    c = np.zeros(n_x)
    v2 = sum(float(np.sum((t.V * t.weights) ** 2)) for t in tasks)
    v_unit = np.sqrt(v2 + scale_floor**2)  # the solver's variable is s * v_unit: well scaled for OSQP
    for t in tasks:
        M = np.hstack([t.J * t.weights[:, None], -(t.V * t.weights / v_unit)[:, None]])
        P += M.T @ M  # residual M x = W J qdot - s W V
    N = nullspace_projector(np.vstack([t.J * t.weights[:, None] for t in tasks]) if tasks else np.zeros((0, n_dofs)))
    NtN = N.T @ N
    P[:n_dofs, :n_dofs] += posture_weight * NtN + damping * np.eye(n_dofs)
    if posture is not None:
        c[:n_dofs] -= posture_weight * NtN @ posture
    P[n_dofs, n_dofs] += scale_weight
    c[n_dofs] -= scale_weight * v_unit
    G = np.vstack([lim.G for lim in limits]) if limits else np.zeros((0, n_dofs))
    lo = np.concatenate([lim.lo for lim in limits]) if limits else np.zeros(0)
    hi = np.concatenate([lim.hi for lim in limits]) if limits else np.zeros(0)
    n_rows = len(G) if n_rows is None else n_rows
    if len(G) > n_rows:
        raise InputError(f"{len(G)} constraint rows exceed the QP's fixed size of {n_rows}")
    A = np.zeros((n_rows + 1, n_x))
    A[:len(G), :n_dofs] = G
    A[n_rows, n_dofs] = 1.0
    l = np.full(n_rows + 1, -INF)
    u = np.full(n_rows + 1, INF)
    l[:len(G)], u[:len(G)] = np.maximum(lo, -INF), np.minimum(hi, INF)
    l[n_rows], u[n_rows] = 0.0, v_unit
    return QP(P, c, A, l, u, v_unit)


@dataclass(frozen=True)
class QPSolution:
    """x = [qdot, s] if solved; ``status`` is OSQP's status text; ``solved`` is True only for 'solved'."""

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
            return QPSolution(np.zeros(self.n_x - 1), 0.0, False, str(res.info.status), int(res.info.iter))
        return QPSolution(res.x[:-1].copy(), float(res.x[-1]) / qp.s_unit, True, str(res.info.status),
                          int(res.info.iter))
