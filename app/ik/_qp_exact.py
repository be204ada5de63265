"""Certified exact solutions of the tick's QP, so that OSQP runs only where they do not exist.

The QP is convex, so a point that satisfies its KKT conditions is its solution. Two cheap
candidates are checked (see :func:`exact_solution_one`); both are exact to rounding, where OSQP's
ADMM answers to its tolerance.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._linalg import solve_spd


@njit(cache=True)
def _rows_hold(A, l, u, x):
    """Whether l <= A x <= u on every row (exactly; False for NaN)."""
    for i in range(A.shape[0]):
        ax = 0.0
        for k in range(x.shape[0]):
            ax += A[i, k] * x[k]
        if not (l[i] <= ax <= u[i]):
            return False
    return True


@njit(cache=True)
def _stationary(P, c, x, free):
    """Whether (P x + c)_i vanishes to rounding on the ``free`` rows (False for NaN)."""
    n = x.shape[0]
    for i in range(n):
        if not free[i]:
            continue
        r, mag = c[i], abs(c[i])
        for k in range(n):
            r += P[i, k] * x[k]
            mag += abs(P[i, k] * x[k])
        if not (abs(r) <= 1e-9 * mag):
            return False
    return True


@njit(cache=True)
def _resolve_free(P, c, free, x):
    """x's ``free`` entries minimising the objective with the others held: P_FF x_F = -(c_F + P_FH x_H)."""
    n = x.shape[0]
    F = np.flatnonzero(free)
    m = F.shape[0]
    if m == 0:
        return
    L, rhs, x_F = np.empty((m, m)), np.empty(m), np.empty(m)
    for a in range(m):
        s = -c[F[a]]
        for j in range(n):
            if not free[j]:
                s -= P[F[a], j] * x[j]
        rhs[a] = s
        for b in range(m):
            L[a, b] = P[F[a], F[b]]
    solve_spd(L, rhs, x_F)
    for a in range(m):
        x[F[a]] = x_F[a]


@njit(cache=True)
def exact_solution_one(P, c, A, l, u, x):
    """The QP's solution into x (n,) when it can be certified cheaply; returns whether it could.

    The first n rows of A are the identity (the joint box). Two candidates, each accepted only if
    it satisfies the KKT conditions exactly (rounding aside), so it is the solution, not an estimate:
    1. the unconstrained minimiser -P^-1 c, if it satisfies every row;
    2. that with the box rows it violates held at the violated bound and the others re-solved,
       if every row holds and the objective pushes each held DOF against its bound (the right sign
       of its multiplier). This is the common case of a joint resting at a limit.
    Otherwise False (the caller runs OSQP).
    """
    n = c.shape[0]
    L, rhs = P.copy(), -c
    solve_spd(L, rhs, x)
    free = np.ones(n, dtype=np.bool_)
    if not _stationary(P, c, x, free):
        return False
    if _rows_hold(A, l, u, x):
        return True
    upper = np.zeros(n, dtype=np.bool_)
    for i in range(n):  # hold each DOF that leaves the box at the bound it crosses
        if x[i] > u[i] or x[i] < l[i]:
            free[i], upper[i] = False, x[i] > u[i]
            x[i] = u[i] if upper[i] else l[i]
    _resolve_free(P, c, free, x)
    if not (_stationary(P, c, x, free) and _rows_hold(A, l, u, x)):
        return False
    for i in range(n):  # multiplier signs: the objective pushes the held DOF outwards
        if not free[i]:
            g = c[i]
            for k in range(n):
                g += P[i, k] * x[k]
            if (upper[i] and g > 0.0) or (not upper[i] and g < 0.0):
                return False
    return True
