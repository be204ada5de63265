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

:func:`app.ik.qp_builder.build_qp` (the one builder, from tasks and limits) returns the matrices;
:class:`QPSolver` keeps one OSQP workspace whose sparsity pattern is fixed at construction (dense P
upper triangle, dense constraint block of a fixed number of rows) and only updates its data when
it runs.

OSQP runs only where no solution is certified. The build runs the dual active-set method of
Goldfarb and Idnani on each environment's QP (:mod:`app.ik._qp_active_set`, compiled): from the
unconstrained minimiser it adds the most violated row and drops rows whose multiplier reaches zero,
and its answer is kept only where it passes the KKT conditions (every row within 1e-9, multipliers
>= 0, stationarity to rounding). At these sizes that takes a few microseconds, against ~40-60 us for
OSQP's update and solve, and the answer is exact to rounding instead of ADMM's 1e-6 tolerance; OSQP
then runs only for a QP the method cannot certify (an infeasible one, whose status it reports).
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass

import numpy as np

from app.errors import InputError
from app.ik._qp_kernel import OSQP_INF, feasible_scale_one
from app.kernels.dispatch import kernel_array

INF = OSQP_INF  # OSQP's infinity
DAMPING = 1e-9  # mu of the cost: keeps P positive definite when the tasks leave directions free


@dataclass(slots=True)  # made per environment and tick: slots, not frozen (a frozen init costs ~1.5 us)
class QP:
    """OSQP form: minimise 1/2 x^T P x + c^T x subject to l <= A x <= u.

    Attributes:
        P: Shape (n_x, n_x), symmetric positive semi-definite.
        c: Shape (n_x,).
        A: Shape (n_rows, n_x).
        l, u: Shape (n_rows,); +-INF where unbounded.
        scale: The factor a applied to the tasks' twist.
        x_exact: The solution where the build could certify it (see the module docstring); None
            where it could not (or was not asked to).
    """

    P: np.ndarray
    c: np.ndarray
    A: np.ndarray
    l: np.ndarray
    u: np.ndarray
    scale: float = 1.0
    x_exact: np.ndarray | None = None


@dataclass(slots=True)
class QPBatch:
    """The QPs of B environments as stacked arrays (fields as in :class:`QP`, with a leading B axis;
    ``exact`` (B,) says where ``x_exact`` is the certified solution; ``task_error`` (B, T, 6) are the T frame
    tasks' errors (T = 0 without one). Indexing gives one environment's QP."""

    P: np.ndarray
    c: np.ndarray
    A: np.ndarray
    l: np.ndarray
    u: np.ndarray
    scale: np.ndarray
    x_exact: np.ndarray
    exact: np.ndarray
    task_error: np.ndarray

    def __len__(self) -> int:
        return len(self.c)

    def __getitem__(self, b: int) -> QP:
        return QP(self.P[b], self.c[b], self.A[b], self.l[b], self.u[b], float(self.scale[b]),
                  self.x_exact[b] if self.exact[b] else None)


@dataclass(frozen=True)
class Inequalities:
    """Rows lo <= G qdot <= hi. G: (k, n_dofs), lo and hi: (k,)."""

    G: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def feasible_scale(J_w: np.ndarray, V_w: np.ndarray, lo: np.ndarray, hi: np.ndarray, damping: float = 1e-3,
                   pinned_ratio: float = 0.05) -> float:
    """Largest a in [0, 1] with a qdot* inside the box [lo, hi], qdot* = J_w^+ V_w.

    A joint that the box holds to less than ``pinned_ratio`` of the speed qdot* asks of it (one at
    a position limit) is dropped and qdot* recomputed without it, so that the other joints carry the
    motion instead of the whole task stopping. J_w (m, n), V_w (m,), lo/hi (n,).
    """
    return float(feasible_scale_one(kernel_array(J_w), kernel_array(V_w), kernel_array(lo), kernel_array(hi), damping,
                                    pinned_ratio))


@dataclass(frozen=True)
class QPSolution:
    """qdot if solved (zeros otherwise); ``scale`` is the twist scale; ``solved`` is True only for 'solved'."""

    qdot: np.ndarray
    scale: float
    solved: bool
    status: str
    iterations: int


def _pass_on_interrupt() -> None:
    """OSQP caught a Ctrl-C (its own SIGINT handler is installed while it iterates) and returned: raised here as
    KeyboardInterrupt and, on a helper thread, sent to the process again, so that the main thread (where Python
    runs signal handlers) stops too: a run's block solving on a thread while Ray starts swallowed the Ctrl-C,
    and the run went on until the actors' first block ended (150 s)."""
    if threading.current_thread() is not threading.main_thread():
        signal.raise_signal(signal.SIGINT)
    raise KeyboardInterrupt


class QPSolver:
    """One warm OSQP workspace for QPs of a fixed size (one per environment), set up on the first QP that needs
    it: certified answers never do, so most runs never import osqp and scipy.sparse (~0.2 s of every process's
    start) nor set a workspace up.

    Args:
        n_x: Number of variables. n_rows: Number of constraint rows (all dense).
        eps: OSQP's absolute and relative tolerances. max_iter: OSQP iteration cap.
    """

    def __init__(self, n_x: int, n_rows: int, eps: float = 1e-6, max_iter: int = 4000):
        self.n_x, self.n_rows, self.eps, self.max_iter = n_x, n_rows, eps, max_iter
        self._solver = None

    def _setup(self) -> None:
        import osqp
        from scipy import sparse

        n_x, n_rows, eps = self.n_x, self.n_rows, self.eps
        triu = np.triu_indices(n_x)
        order = np.lexsort((triu[0], triu[1]))  # CSC: column by column, rows ascending
        triu = (triu[0][order], triu[1][order])
        P0 = sparse.csc_matrix((np.ones(len(triu[0])), triu), shape=(n_x, n_x))
        rows, cols = np.meshgrid(np.arange(n_rows), np.arange(n_x), indexing="ij")
        order = np.lexsort((rows.ravel(), cols.ravel()))
        a_idx = (rows.ravel()[order], cols.ravel()[order])
        A0 = sparse.csc_matrix((np.ones(n_rows * n_x), a_idx), shape=(n_rows, n_x))
        self._p_flat = np.ravel_multi_index(triu, (n_x, n_x))  # CSC data order in the flat arrays
        self._a_flat = np.ravel_multi_index(a_idx, (n_rows, n_x))
        solver = osqp.OSQP()  # kept only once set up: a Ctrl-C during this first setup leaves none half made
        # scaling 2 (of 10), rho adapted every 20 iterations and termination checked every 5 (of 25): 34
        # iterations on average instead of 57 on ticks recorded from the table scene, same precision
        solver.setup(P=P0, q=np.zeros(n_x), A=A0, l=-np.ones(n_rows), u=np.ones(n_rows), verbose=False,
                     warm_starting=True, polishing=False, eps_abs=eps, eps_rel=eps, max_iter=self.max_iter,
                     scaling=2, adaptive_rho_interval=20, check_termination=5)
        self._solved, self._interrupted = osqp.SolverStatus.OSQP_SOLVED, osqp.SolverStatus.OSQP_SIGINT
        self._solver = solver

    def solve(self, qp: QP, x_warm: np.ndarray | None = None) -> QPSolution:
        """``qp.x_exact`` where given (iterations 0), else update the workspace with ``qp``'s data and run
        OSQP, started from ``x_warm`` (n_x,) where given (the caller passes the previous tick's answer when that
        one was certified without this workspace), else from the workspace's own last iterate. Never returns NaN:
        a failure gives zeros."""
        if qp.P.shape != (self.n_x, self.n_x) or qp.A.shape != (self.n_rows, self.n_x):
            raise InputError(f"QP of shape P{qp.P.shape}, A{qp.A.shape} does not fit this workspace "
                             f"({self.n_x} variables, {self.n_rows} rows)")
        if qp.x_exact is not None:
            return QPSolution(qp.x_exact, qp.scale, True, "solved", 0)
        if self._solver is None:
            self._setup()
        if x_warm is not None:  # an exact answer (its duals are not kept)
            self._solver.warm_start(x=x_warm, y=np.zeros(self.n_rows))
        self._solver.update(Px=qp.P.take(self._p_flat), Ax=qp.A.take(self._a_flat), q=qp.c, l=qp.l, u=qp.u)
        res = self._solver.solve(raise_error=False)
        info, x = res.info, res.x
        if info.status_val == self._interrupted:
            _pass_on_interrupt()
        x = np.array(x, dtype=float)
        solved = info.status_val == self._solved and np.isfinite(x.sum())  # a NaN or inf anywhere shows in the sum
        if not solved:
            return QPSolution(np.zeros(self.n_x), 0.0, False, str(info.status), int(info.iter))
        return QPSolution(x, qp.scale, True, "solved", int(info.iter))
