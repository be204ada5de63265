"""Small dense linear algebra, compiled, written once: Cholesky, SPD solves, damped pseudo-inverse
and nullspace projector. Used by the LM loop, the QP assembly and certification, and diff IK.

At the sizes here (n <= ~12) these loops beat LAPACK calls, whose per-call overhead dominates.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_inplace(A):
    """Overwrite the lower triangle of the symmetric positive-definite A (m, m) with its Cholesky factor.
    Pivots are floored at 1e-300 (never NaN). One array in and out: a separate output that might alias
    the input kept LLVM from keeping values in registers (the LM loop was ~10 % slower)."""
    m = A.shape[0]
    for j in range(m):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        d = np.sqrt(max(d, 1e-300))
        A[j, j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d


@njit(cache=True)
def forward_solve(L, b, out):
    """Solve L y = b into out (may be b itself), L lower triangular (m, m)."""
    m = L.shape[0]
    for i in range(m):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True)
def back_solve(L, b, out):
    """Solve L^T x = b into out (may be b itself), L lower triangular (m, m)."""
    m = L.shape[0]
    for i in range(m - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, m):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True)
def cho_solve(L, b, out):
    """Solve L L^T x = b into out, with L from :func:`cholesky_inplace`."""
    forward_solve(L, b, out)
    back_solve(L, out, out)


@njit(cache=True)
def solve_spd(A, b, out):
    """Solve A x = b for a symmetric positive-definite A (n, n) into out (A is overwritten)."""
    cholesky_inplace(A)
    cho_solve(A, b, out)


@njit(cache=True)
def _damped_gram(J, free, damping, G):
    """The lower triangle of G = J_f J_f^T + damping^2 I (all :func:`cholesky_inplace` reads), J_f = J
    restricted to the ``free`` columns. J (m, n), G (m, m)."""
    m, n = J.shape
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                if free[k]:
                    s += J[i, k] * J[j, k]
            G[i, j] = s
        G[i, i] += damping * damping


@njit(cache=True)
def damped_pinv_apply(J, v, free, damping, out):
    """out = J_f^T (J_f J_f^T + damping^2 I)^-1 v: the damped least-squares step (zero on held columns)."""
    m, n = J.shape
    G, y = np.empty((m, m)), np.empty(m)
    _damped_gram(J, free, damping, G)
    solve_spd(G, v, y)
    for k in range(n):
        s = 0.0
        if free[k]:
            for i in range(m):
                s += J[i, k] * y[i]
        out[k] = s


@njit(cache=True)
def damped_pinv_one(J, damping, out):
    """The damped pseudo-inverse J^T (J J^T + damping^2 I)^-1 of J (m, n) into out (n, m)."""
    m, n = J.shape
    e = np.zeros(m)
    for i in range(m):
        e[i] = 1.0
        damped_pinv_apply(J, e, np.ones(n, dtype=np.bool_), damping, out[:, i])
        e[i] = 0.0


@njit(cache=True)
def nullspace_projector_one(J, damping, N):
    """N = I - J^T (J J^T + damping^2 I)^-1 J (damped pseudo-inverse) into N (n, n); one Cholesky factor."""
    m, n = J.shape
    for r in range(n):
        for c in range(n):
            N[r, c] = 1.0 if r == c else 0.0
    if m == 0:
        return
    L = np.empty((m, m))
    _damped_gram(J, np.ones(n, dtype=np.bool_), damping, L)
    cholesky_inplace(L)
    Y = np.empty((m, n))  # Y = L^-1 J, so that J^T (J J^T + damping^2 I)^-1 J = Y^T Y
    for c in range(n):
        for i in range(m):
            s = J[i, c]
            for k in range(i):
                s -= L[i, k] * Y[k, c]
            Y[i, c] = s / L[i, i]
    for r in range(n):
        for c in range(n):
            s = 0.0
            for i in range(m):
                s += Y[i, r] * Y[i, c]
            N[r, c] -= s
