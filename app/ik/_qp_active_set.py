"""The dual active-set method of Goldfarb and Idnani (1983) for the tick's small dense QP, compiled.

    minimise 1/2 x^T P x + c^T x   subject to   l <= A x <= u,   P symmetric positive definite.

Each two-sided row i gives up to two one-sided constraints n^T x >= b: its lower side (A_i, l_i) and its upper
side (-A_i, -u_i); bounds at +-OSQP_INF are absent. The method starts at the unconstrained minimiser and adds the
most violated constraint (violation over the row's norm) while keeping the multipliers of the active set
non-negative, dropping a constraint whose multiplier reaches zero. Every iterate is the minimiser over its
active set, so the loop ends at the QP's solution, or where the added constraint depends on active ones with no
multiplier left to drop: the QP is infeasible. With P = L L^T, the active normals enter only as W = L^-1 N, so
each step is a k x k solve (k <= n active) on top of one Cholesky factor and one triangular solve per row.

The answer is returned only after the KKT conditions are checked on it (x finite, rows within FEASIBILITY, the
active ones at their bounds, multipliers >= 0, stationarity to rounding): a certified solution, exact to rounding
where OSQP's ADMM stops at its tolerance; otherwise the caller runs OSQP.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._linalg import back_solve, cho_solve, cholesky_inplace, forward_solve, solve_spd
from app.ik._qp_kernel import OSQP_INF

FEASIBILITY = 1e-9  # a row may miss its bound by this much (times max(1, |bound|)); OSQP's own eps is 1e-6


@njit(cache=True)
def _side(A, l, u, j):
    """Constraint j as (sign, row, bound): n = sign * A[row], n^T x >= bound. j < m: lower side of row j;
    j >= m: upper side of row j - m."""
    m = A.shape[0]
    if j < m:
        return 1.0, j, l[j]
    return -1.0, j - m, -u[j - m]


@njit(cache=True)
def _most_violated(A, l, u, x, norms, is_active):
    """The constraint that x violates most relative to its row's norm, or -1 where every row holds within
    FEASIBILITY."""
    m, n = A.shape
    best, worst = -1, 0.0
    for i in range(m):
        ax = 0.0
        for k in range(n):
            ax += A[i, k] * x[k]
        for side in range(2):
            j, gap, bound = (i, ax - l[i], l[i]) if side == 0 else (m + i, u[i] - ax, u[i])
            if is_active[j] or abs(bound) >= OSQP_INF or gap >= -FEASIBILITY * max(1.0, abs(bound)):
                continue
            if gap / norms[i] < worst:
                best, worst = j, gap / norms[i]
    return best


@njit(cache=True)
def _step_directions(Lp, W, A, l, u, active, k, w, r, z):
    """For the constraint whose L^-1 n is w (n,): r (k,) = M^-1 B w (B rows: the active constraints' L^-1 n,
    M = B B^T) and z (n,) = L^-T (w - B^T r), the primal step direction. Returns z^T n = |w - B^T r|^2."""
    n = w.shape[0]
    d = w.copy()
    if k > 0:
        B, M, Bw = np.empty((k, n)), np.empty((k, k)), np.empty(k)
        for a in range(k):
            sign, row, _ = _side(A, l, u, active[a])
            for t in range(n):
                B[a, t] = sign * W[row, t]
        for a in range(k):
            s = 0.0
            for t in range(n):
                s += B[a, t] * w[t]
            Bw[a] = s
            for b in range(a + 1):
                s = 0.0
                for t in range(n):
                    s += B[a, t] * B[b, t]
                M[a, b] = s
                M[b, a] = s
        solve_spd(M, Bw, r[:k])
        for a in range(k):
            for t in range(n):
                d[t] -= B[a, t] * r[a]
    zn = 0.0
    for t in range(n):
        zn += d[t] * d[t]
    back_solve(Lp, d, z)
    return zn


@njit(cache=True)
def _kkt_holds(P, c, A, l, u, x, active, mult, k):
    """Whether x and the active multipliers satisfy the KKT conditions: x finite, every row within FEASIBILITY,
    every active side at its bound within FEASIBILITY (rounding can leave it inside while its multiplier still
    acts), multipliers >= 0, and P x + c = sum of mult * n over the active set to rounding (False for NaN)."""
    m, n = A.shape
    for t in range(n):
        if not np.isfinite(x[t]):
            return False
    for i in range(m):
        ax = 0.0
        for t in range(n):
            ax += A[i, t] * x[t]
        if not (ax >= l[i] - FEASIBILITY * max(1.0, abs(l[i])) and ax <= u[i] + FEASIBILITY * max(1.0, abs(u[i]))):
            return False
    g, mag = c.copy(), np.abs(c)
    for i in range(n):
        for t in range(n):
            g[i] += P[i, t] * x[t]
            mag[i] += abs(P[i, t] * x[t])
    for a in range(k):
        sign, row, bound = _side(A, l, u, active[a])
        slack = -bound
        for t in range(n):
            slack += sign * A[row, t] * x[t]
        if not (mult[a] >= 0.0 and abs(slack) <= FEASIBILITY * max(1.0, abs(bound))):
            return False
        for t in range(n):
            g[t] -= mult[a] * sign * A[row, t]
            mag[t] += abs(mult[a] * A[row, t])
    for t in range(n):
        if not abs(g[t]) <= 1e-9 * mag[t]:  # relative to the terms' size: rounding, at any scale
            return False
    return True


@njit(cache=True)
def _drop(active, mult, k, a, is_active):
    """Remove entry a of the active set (k entries); returns k - 1."""
    is_active[active[a]] = False
    for b in range(a, k - 1):
        active[b], mult[b] = active[b + 1], mult[b + 1]
    return k - 1


@njit(cache=True)
def _factor(P, A):
    """P = L L^T: (L (n, n) lower triangular, W (m, n) with W[i] = L^-1 A_i, the rows' norms (m,))."""
    m, n = A.shape
    Lp = P.copy()
    cholesky_inplace(Lp)
    for i in range(n):
        for t in range(i + 1, n):
            Lp[i, t] = 0.0
    W, norms = np.empty((m, n)), np.empty(m)
    for i in range(m):
        forward_solve(Lp, A[i], W[i])
        norms[i] = max(np.sqrt(np.sum(A[i] * A[i])), 1e-300)
    return Lp, W, norms


@njit(cache=True)
def _add(Lp, W, A, l, u, x, p, active, mult, k, is_active, steps, max_steps):
    """Constraint p made active: primal-dual steps that drop active constraints whose multiplier reaches zero on
    the way. Returns (k, steps, outcome): outcome 1 added, 0 infeasible (p depends on the active set with nothing
    to drop), -1 out of steps."""
    n = x.shape[0]
    sign, row, bound = _side(A, l, u, p)
    r, z, w = np.empty(n), np.empty(n), np.empty(n)
    for t in range(n):
        w[t] = sign * W[row, t]
    mult_p = 0.0
    while steps < max_steps:
        steps += 1
        zn = _step_directions(Lp, W, A, l, u, active, k, w, r, z)
        drop, t_partial = -1, np.inf  # the largest dual step keeping the active multipliers >= 0
        for a in range(k):
            if r[a] > 0.0 and mult[a] / r[a] < t_partial:
                drop, t_partial = a, mult[a] / r[a]
        slack = -bound
        for t in range(n):
            slack += sign * A[row, t] * x[t]
        independent = k < n and zn > 1e-14 * (1.0 + np.sum(w * w))
        t_full = -slack / zn if independent else np.inf  # the step onto the bound
        if drop < 0 and t_full == np.inf:
            return k, steps, 0
        step = min(t_partial, t_full)
        if t_full < np.inf:
            for t in range(n):
                x[t] += step * z[t]
        for a in range(k):
            mult[a] -= step * r[a]
        mult_p += step
        if t_full <= t_partial:
            active[k], mult[k], is_active[p] = p, mult_p, True
            return k + 1, steps, 1
        k = _drop(active, mult, k, drop, is_active)
    return k, steps, -1


@njit(cache=True)
def active_set_solve(P, c, A, l, u, x, max_steps):
    """The QP's solution into x (n,); returns whether it was found and certified (see the module docstring).
    P (n, n), c (n,), A (m, n), l and u (m,). At most ``max_steps`` steps (adds and drops)."""
    m, n = A.shape
    Lp, W, norms = _factor(P, A)
    cho_solve(Lp, -c, x)
    active, mult, is_active = np.empty(n, dtype=np.int64), np.empty(n), np.zeros(2 * m, dtype=np.bool_)
    k, steps = 0, 0
    while steps < max_steps:
        p = _most_violated(A, l, u, x, norms, is_active)
        if p < 0:
            return _kkt_holds(P, c, A, l, u, x, active, mult, k)
        k, steps, outcome = _add(Lp, W, A, l, u, x, p, active, mult, k, is_active, steps, max_steps)
        if outcome != 1:
            return False
    return False
