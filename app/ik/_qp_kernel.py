"""Compiled assembly of one QP from its task rows, box, further rows and posture (see
:mod:`app.ik.qp`); the builder (app.ik.qp_builder) calls it per environment.

At 9 variables numpy's per-call overhead (~2 us per small operation here) made building one
QP cost ~300 us; this kernel is the only implementation of the assembly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._linalg import damped_pinv_apply, nullspace_projector_one

OSQP_INF = 1e30


@njit(cache=True)
def feasible_scale_one(J, V, lo, hi, damping, pinned_ratio):
    """Largest a in [0, 1] with a J^+ V in [lo, hi], pinned joints dropped (see qp.feasible_scale)."""
    n = J.shape[1]
    if J.shape[0] == 0:
        return 1.0
    free = np.ones(n, dtype=np.bool_)
    qdot = np.empty(n)
    best = 1.0
    for _ in range(n):
        damped_pinv_apply(J, V, free, damping, qdot)
        best, any_pinned = 1.0, False
        for k in range(n):
            if not free[k] or qdot[k] == 0.0:
                continue
            r = hi[k] / qdot[k] if qdot[k] > 0 else lo[k] / qdot[k]
            if r < pinned_ratio:
                free[k] = False
                any_pinned = True
            elif r < best:
                best = r
        if not any_pinned:
            break
    return min(max(best, 0.0), 1.0)


@njit(cache=True)
def rows_at_bound(A, l, u, x, tol):
    """Which rows of each QP hold x at a bound: |A x - l| < tol or |A x - u| < tol. A (B, m, n), l, u (B, m),
    x (B, n) -> (B, m) bool."""
    B, m, n = A.shape
    at = np.zeros((B, m), dtype=np.bool_)
    for b in range(B):
        for i in range(m):
            ax = 0.0
            for k in range(n):
                ax += A[b, i, k] * x[b, k]
            at[b, i] = abs(ax - l[b, i]) < tol or abs(ax - u[b, i]) < tol
    return at


@njit(cache=True)
def active_rows(A, l, u, x, solved, tol, env, distance, n):
    """Rows at a bound (:func:`rows_at_bound`) of each solved QP, and its distance rows': A (B, m, n), l, u (B, m),
    x (B, n), solved (B,); the distance rows' environments env (K,) (grouped) and distances (K,) (closest first in
    each group), placed after the n box rows. Returns (rows at a bound per QP (B,), each distance row at its bound
    (K,), the smallest distance per QP (B,), inf where none)."""
    at = rows_at_bound(A, l, u, x, tol)
    count = np.zeros(A.shape[0], dtype=np.int64)
    for b in range(A.shape[0]):
        if solved[b]:
            for i in range(A.shape[1]):
                count[b] += at[b, i]
    active, smallest = np.zeros(env.shape[0], dtype=np.bool_), np.full(A.shape[0], np.inf)
    first = 0
    for k in range(env.shape[0]):
        if k == 0 or env[k] != env[k - 1]:
            first = k
            smallest[env[k]] = distance[k]
        active[k] = solved[env[k]] and at[env[k], n + k - first]
    return count, active, smallest


@njit(cache=True)
def assemble_one(J, V, box_lo, box_hi, G, g_lo, g_hi, n_g, posture, posture_weight, damping, scale_box,
                 N, P, c, A, l, u):
    """One environment's QP into P (n, n), c (n,), A (n + K, n), l, u (n + K,); returns the twist scale.

    Args:
        J, V: Weighted task rows (m, n), (m,). box_lo, box_hi: The velocity box (n,), the first n rows.
        G, g_lo, g_hi: Further rows (K, n), (K,), (K,), the first ``n_g`` in use (collisions, given rows).
        posture: Preferred joint velocity (n,), weighted by ``posture_weight`` in the tasks' nullspace.
        damping: mu of the cost. scale_box: scale V into the box first (see qp.feasible_scale).
        N: (n, n) scratch. A's unused rows must be zero.
    """
    m, n = J.shape
    scale = feasible_scale_one(J, V, box_lo, box_hi, 1e-3, 0.05) if scale_box else 1.0
    nullspace_projector_one(J, 1e-4, N)
    for r in range(n):
        s_c = 0.0
        for i in range(m):
            s_c -= J[i, r] * V[i] * scale
        for col in range(n):
            ntn, s = 0.0, 0.0
            for k in range(n):
                ntn += N[k, r] * N[k, col]
            for i in range(m):
                s += J[i, r] * J[i, col]
            P[r, col] = s + posture_weight * ntn + (damping if r == col else 0.0)
            s_c -= posture_weight * ntn * posture[col]
        c[r] = s_c
        A[r, r] = 1.0
        l[r], u[r] = max(box_lo[r], -OSQP_INF), min(box_hi[r], OSQP_INF)
    for k in range(n_g):
        A[n + k, :] = G[k]
        l[n + k], u[n + k] = max(g_lo[k], -OSQP_INF), min(g_hi[k], OSQP_INF)
    for k in range(n + n_g, A.shape[0]):
        l[k], u[k] = -OSQP_INF, OSQP_INF
    return scale
