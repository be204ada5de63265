"""Compiled assembly of the tick's QP for a batch of environments (see :mod:`app.ik.qp`).

At 9 variables numpy's per-call overhead (~2 us per small operation here) made building one
QP cost ~300 us; this kernel is the only implementation of the assembly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._lm import solve_spd
from app.ik._qp_exact import exact_solution_one

OSQP_INF = 1e30


@njit(cache=True)
def _damped_pinv_apply(J, v, free, damping, out):
    """out = J_f^T (J_f J_f^T + damping^2 I)^-1 v with J_f = J restricted to ``free`` columns."""
    m, n = J.shape
    A = np.empty((m, m))
    for i in range(m):
        for j in range(m):
            s = 0.0
            for k in range(n):
                if free[k]:
                    s += J[i, k] * J[j, k]
            A[i, j] = s
        A[i, i] += damping * damping
    y = np.empty(m)
    solve_spd(A, v.copy(), y)
    for k in range(n):
        s = 0.0
        if free[k]:
            for i in range(m):
                s += J[i, k] * y[i]
        out[k] = s


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
        _damped_pinv_apply(J, V, free, damping, qdot)
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
def nullspace_projector_one(J, damping, N):
    """N = I - J^T (J J^T + damping^2 I)^-1 J (damped pseudo-inverse) into N (n, n); one Cholesky factor."""
    m, n = J.shape
    for r in range(n):
        for c in range(n):
            N[r, c] = 1.0 if r == c else 0.0
    if m == 0:
        return
    L = np.empty((m, m))
    for i in range(m):  # L L^T = J J^T + damping^2 I
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += J[i, k] * J[j, k]
            if i == j:
                s += damping * damping
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = np.sqrt(max(s, 1e-300)) if i == j else s / L[j, j]
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


@njit(cache=True)
def joint_box_one(q, qdot, dt, v_max, q_min, q_max, accel_max, use_accel, use_qdot, lo, hi):
    """Box rows of app.ik.limits.JointLimits for one configuration q, qdot (n,) into lo, hi (n,)."""
    for i in range(q.shape[0]):
        l = max(-v_max[i], (q_min[i] - q[i]) / dt)
        h = min(v_max[i], (q_max[i] - q[i]) / dt)
        if use_accel:  # no faster than what can still brake before the limit
            l = max(l, -np.sqrt(2.0 * accel_max[i] * max(q[i] - q_min[i], 0.0)))
            h = min(h, np.sqrt(2.0 * accel_max[i] * max(q_max[i] - q[i], 0.0)))
        l, h = min(l, v_max[i]), max(h, -v_max[i])  # past a limit: come back, no faster than v_max
        l = min(l, h)
        if use_accel and use_qdot:
            step = accel_max[i] * dt
            l, h = min(max(qdot[i] - step, l), h), min(max(qdot[i] + step, l), h)
        lo[i], hi[i] = max(l, -OSQP_INF), min(h, OSQP_INF)


@njit(cache=True)
def joint_box(q, qdot, dt, v_max, q_min, q_max, accel_max, use_accel, use_qdot):
    """:func:`joint_box_one` for q, qdot (B, n) -> (lo, hi) (B, n)."""
    lo, hi = np.empty(q.shape), np.empty(q.shape)
    for b in range(q.shape[0]):
        joint_box_one(q[b], qdot[b], dt, v_max, q_min, q_max, accel_max, use_accel, use_qdot, lo[b], hi[b])
    return lo, hi


@njit(cache=True)
def distance_row_one(distance, normal, J_ab, d_safe, gamma, dt, G):
    """One collision row n^T (J_a - J_b) qdot >= -gamma (d - d_safe) / h: G (n,) written, the bound returned.

    normal (3,), J_ab = J_a - J_b (3, n)."""
    for k in range(G.shape[0]):
        G[k] = normal[0] * J_ab[0, k] + normal[1] * J_ab[1, k] + normal[2] * J_ab[2, k]
    return -gamma * (distance - d_safe) / dt


@njit(cache=True)
def distance_rows_batch(distance, normal, J_ab, d_safe, gamma, dt):
    """:func:`distance_row_one` for K pairs: (G (K, n), lo (K,))."""
    K, n = distance.shape[0], J_ab.shape[2]
    G, lo = np.empty((K, n)), np.empty(K)
    for k in range(K):
        lo[k] = distance_row_one(distance[k], normal[k], J_ab[k], d_safe, gamma, dt, G[k])
    return G, lo


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
def assemble_one(J, V, box_lo, box_hi, G, g_lo, g_hi, n_g, posture, posture_weight, damping, scale_box,
                 N, P, c, A, l, u):
    """One environment's QP into P (n, n), c (n,), A (n + K, n), l, u (n + K,); returns the twist scale.

    Arguments as one row of :func:`assemble_batch`'s; N (n, n) is scratch. A's unused rows must be zero.
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


@njit(cache=True)
def assemble_batch(J, V, box_lo, box_hi, G, g_lo, g_hi, n_g, posture, posture_weight, damping, scale_box):
    """QP data of every environment.

    Args:
        J, V: Weighted task rows. Shapes (B, m, n), (B, m).
        box_lo, box_hi: Joint velocity box (identity rows, first n constraint rows). Shape (B, n).
        G, g_lo, g_hi: Further rows (collisions), padded. Shapes (B, K, n), (B, K), (B, K).
        n_g: Rows of G in use per environment. Shape (B,).
        posture: Preferred joint velocities. Shape (B, n).
        scale_box: Whether to scale V into the box (see qp.feasible_scale).
    Returns:
        P (B, n, n), c (B, n), A (B, n + K, n), l, u (B, n + K), scale (B,), the unconstrained
        x_exact (B, n) and whether it is each QP's certified solution (B,) (see exact_solution_one).
    """
    B, m, n = J.shape
    K = G.shape[1]
    P, c, A = np.empty((B, n, n)), np.empty((B, n)), np.zeros((B, n + K, n))
    l, u, scale = np.empty((B, n + K)), np.empty((B, n + K)), np.ones(B)
    x_exact, exact = np.zeros((B, n)), np.zeros(B, dtype=np.bool_)
    N = np.empty((n, n))
    for b in range(B):
        scale[b] = assemble_one(J[b], V[b], box_lo[b], box_hi[b], G[b], g_lo[b], g_hi[b], n_g[b], posture[b],
                                posture_weight, damping, scale_box, N, P[b], c[b], A[b], l[b], u[b])
        exact[b] = exact_solution_one(P[b], c[b], A[b], l[b], u[b], x_exact[b])
    return P, c, A, l, u, scale, x_exact, exact
