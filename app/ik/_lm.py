"""Compiled Levenberg-Marquardt loop of the pose-IK solver, one problem at a time.

Everything a single iteration does (FK, masked residual, Jacobian, damped solve, trust
region, limit handling, step acceptance, stall detection and restarts) runs here without
returning to Python: one numpy-level iteration cost ~400 us on this machine against ~3 us
compiled. The batch is split over threads (app.kernels.dispatch): problems are independent, so the
result does not depend on the thread count, and a batch gives exactly the per-problem answers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._linalg import solve_spd
from app.ik._residual import residual_batch, residual_one, task_jacobian_one
from app.kernels.dispatch import chunked
from app.kinematics._fk_kernels import frames_one


@njit(cache=True)
def score_of(err, char_length, pos_tol, rot_tol):
    """(weighted squared error, all links within tolerance) of err (T, 6)."""
    score, ok = 0.0, True
    for t in range(err.shape[0]):
        pe = err[t, 0] ** 2 + err[t, 1] ** 2 + err[t, 2] ** 2
        re = err[t, 3] ** 2 + err[t, 4] ** 2 + err[t, 5] ** 2
        score += pe + char_length * char_length * re
        if pe > pos_tol * pos_tol or re > rot_tol * rot_tol:
            ok = False
    return score, ok


@njit(cache=True)
def error_norms(err, pos_tol, rot_tol):
    """Per-link error norms of residuals err (B, T, 6) and whether each problem meets both tolerances
    on every link. Returns (pos_err (B, T) [m], rot_err (B, T) [rad], ok (B,))."""
    B, T = err.shape[0], err.shape[1]
    pos_err, rot_err, ok = np.empty((B, T)), np.empty((B, T)), np.ones(B, dtype=np.bool_)
    for b in range(B):
        for t in range(T):
            e = err[b, t]
            pos_err[b, t] = np.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
            rot_err[b, t] = np.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
            ok[b] &= pos_err[b, t] <= pos_tol and rot_err[b, t] <= rot_tol
    return pos_err, rot_err, ok


@njit(cache=True)
def link_error_norms(err):
    """Per-link norms of residuals err (B, T, 6) and the worst link's: (pos_err (B, T) [m], rot_err (B, T) [rad],
    worst pos_err (B,), worst rot_err (B,)), in one call (a control loop's every tick)."""
    pos_err, rot_err, _ = error_norms(err, 1.0, 1.0)
    worst_pos, worst_rot = np.empty(err.shape[0]), np.empty(err.shape[0])
    for b in range(err.shape[0]):
        worst_pos[b], worst_rot[b] = np.max(pos_err[b]), np.max(rot_err[b])
    return pos_err, rot_err, worst_pos, worst_rot


@njit(cache=True)
def pose_error_norms_kernel(q, model, kin, tgt_pos, tgt_rot, task):
    """:func:`link_error_norms` of configurations q (B, n) against targets tgt_pos (B, T, 3), tgt_rot
    (B, T, 3, 3) (the IK's masked residual), in one call."""
    err, _ = residual_batch(q, model, kin, tgt_pos, tgt_rot, task, False)
    return link_error_norms(err)


@njit(cache=True)
def damped_step(J, e, lam2, free, dq):
    """dq = argmin |J dq - e|^2 + lam2 |dq|^2 over DOFs where ``free``; zero elsewhere."""
    n = J.shape[1]
    A = np.zeros((n, n))
    g = np.zeros(n)
    for i in range(n):
        if not free[i]:
            A[i, i] = 1.0
            continue
        for j in range(i, n):
            if free[j]:
                s = 0.0
                for m in range(J.shape[0]):
                    s += J[m, i] * J[m, j]
                A[i, j] = A[j, i] = s
        A[i, i] += lam2
        for m in range(J.shape[0]):
            g[i] += J[m, i] * e[m]
    solve_spd(A, g, dq)


@njit(cache=True)
def _limited_step(J, e, lam2, free, q, q_lo, q_hi, step_scale, step_limit, dq):
    """Damped step with one projection off the joint limits it pushes into, then the trust region."""
    n = q.shape[0]
    damped_step(J, e, lam2, free, dq)
    blocked = np.zeros(n, dtype=np.bool_)
    any_blocked = False
    for i in range(n):
        if (q[i] <= q_lo[i] and dq[i] < 0.0) or (q[i] >= q_hi[i] and dq[i] > 0.0):
            blocked[i] = True
            any_blocked = True
    if any_blocked:
        damped_step(J, e, lam2, free & ~blocked, dq)
    norm = 0.0
    for i in range(n):
        norm += (dq[i] / step_scale[i]) ** 2
    norm = np.sqrt(norm)
    if norm > step_limit:
        dq *= step_limit / norm


@njit(cache=True)
def solve_one(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, seeds, n_seeds, q_out, err_out):
    """Levenberg-Marquardt with restarts for one problem; returns (iterations, restarts).

    Attempts start, in order, from ``seeds[:n_seeds]`` (closed-form branches), q_init, then ``starts``.

    Args:
        q_init: First guess, within limits. Shape (n,).
        starts: Restart points in order; NaN entries take ``q_init``'s value. Shape (S, n).
        seeds, n_seeds: Starting points tried first. Shape (k, n).
        q_out, err_out: Outputs: the best configuration seen (n,) and its residual from FK (T, 6).
        model, kin: The model's FKTables and JacobianTables.
        task: TaskTables. free: DOFs the solver moves (n,). opts: LMOptions.
        """
    pos_tol, rot_tol, char_length, stall_rtol = opts.pos_tol, opts.rot_tol, opts.char_length, opts.stall_rtol
    max_iters, stall_window, q_lo, q_hi = opts.max_iters, opts.stall_window, opts.q_lo, opts.q_hi
    n, T, L = q_init.shape[0], tgt_pos.shape[0], model.parent.shape[0]
    R, p = np.empty((L, 3, 3)), np.empty((L, 3))
    err, J = np.empty((T, 6)), np.empty((6 * T, n))
    e_acc, J_acc = np.empty(6 * T), np.empty((6 * T, n))
    q, q_acc, dq = q_init.copy(), q_init.copy(), np.empty(n)
    w = np.array([1.0, 1.0, 1.0, char_length, char_length, char_length])
    best, total, attempt = np.inf, 0, 0
    q_out[:] = q_init
    if n_seeds:
        q[:] = seeds[0]
    converged = False
    while not converged:
        acc_score, attempt_best, stall, mu = np.inf, np.inf, 0, 1.0
        for _ in range(max_iters):
            frames_one(q, model, R, p)
            residual_one(R, p, tgt_pos, tgt_rot, task, err)
            score, ok = score_of(err, char_length, pos_tol, rot_tol)
            total += 1
            if ok or score < best:  # err_out is then FK's residual of the returned q
                best = score
                q_out[:] = q
                err_out[:] = err
            if ok:
                converged = True
                break
            if score < acc_score:  # accept the step, relax the damping; only here is J needed
                acc_score, mu = score, max(mu * 0.3, 1e-3)
                q_acc[:] = q
                task_jacobian_one(R, p, kin, task, J)
                for r in range(6 * T):
                    e_acc[r] = err[r // 6, r % 6] * w[r % 6]
                    J_acc[r, :] = J[r, :] * w[r % 6]
            else:  # reject: step again from the last accepted point with more damping
                mu = min(mu * 8.0, 1e8)
            if acc_score < (1.0 - stall_rtol) * attempt_best:
                attempt_best, stall = acc_score, 0
            else:
                stall += 1
                if stall >= stall_window:
                    break
            lam2 = mu * (opts.damping2 + np.sum(e_acc * e_acc))
            _limited_step(J_acc, e_acc, lam2, free, q_acc, q_lo, q_hi, opts.step_scale, opts.step_limit, dq)
            for i in range(n):
                q[i] = min(max(q_acc[i] + dq[i], q_lo[i]), q_hi[i])
        if converged or attempt + 1 >= n_seeds + 1 + starts.shape[0]:
            break
        attempt += 1
        if attempt < n_seeds:
            q[:] = seeds[attempt]
        elif attempt == n_seeds:
            q[:] = q_init
        else:
            k = attempt - n_seeds - 1
            for i in range(n):
                q[i] = q_init[i] if np.isnan(starts[k, i]) else min(max(starts[k, i], q_lo[i]), q_hi[i])
    if best == np.inf:  # no finite score was seen: report q_out's own residual
        frames_one(q_out, model, R, p)
        residual_one(R, p, tgt_pos, tgt_rot, task, err_out)
    return total, attempt


def _solve_batch(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, seeds, n_seeds):
    """:func:`solve_one` for every problem. q_init (B, n), starts (B or 1, S, n), targets (B, T, ...),
    seeds (B or 1, k, n) with n_seeds (B or 1,).

    Returns (q (B, n), residual of q from FK (B, T, 6), iterations (B,), restarts (B,)).
    """
    B = q_init.shape[0]
    q_out = np.empty_like(q_init)
    err = np.empty((B, tgt_pos.shape[1], 6))
    iters = np.zeros(B, dtype=np.int64)
    restarts = np.zeros(B, dtype=np.int64)
    for b in range(B):
        iters[b], restarts[b] = solve_one(q_init[b], starts[b % starts.shape[0]], model, kin, tgt_pos[b], tgt_rot[b],
                                          task, free, opts, seeds[b % seeds.shape[0]], n_seeds[b % n_seeds.shape[0]], q_out[b],
                                          err[b])
    return q_out, err, iters, restarts


solve_batch_kernel = njit(cache=True, nogil=True)(_solve_batch)


def solve_batch(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, seeds, n_seeds):
    """:func:`_solve_batch` split over threads (app.kernels.dispatch); the arguments are those of ``_solve_batch``."""
    def kernel(q_init, starts, tgt_pos, tgt_rot, seeds, n_seeds):
        return solve_batch_kernel(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, seeds, n_seeds)

    return chunked(kernel, q_init.shape[0], (q_init, starts, tgt_pos, tgt_rot, seeds, n_seeds), ())
