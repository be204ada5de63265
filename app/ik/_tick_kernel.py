"""The QP controller's whole build in one compiled call (see app.control.controllers.QPController.build).

It strings together the same compiled pieces that the task, the limits and the QP assembly use on
their own (FK, masked residual and Jacobian, joint box, distance rows, assembly, certified exact
solution), per environment. Through the numpy-level classes one tick's build cost ~150 us of
Python overhead on one environment here; in one call it is a few microseconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._qp_exact import exact_solution_one
from app.ik._qp_kernel import OSQP_INF, assemble_one, distance_row_one, joint_box_one
from app.ik._residual import residual_one, task_jacobian_one
from app.kinematics._kernels import frames_one


@njit(cache=True)
def build_tick(q, v, model, kin, task, box, rows, K, posture_args):
    """Every environment's QP of one controller tick.

    Args:
        q, v: Measured joint positions and velocities. Shapes (B, n).
        model, kin: The model's FK and Jacobian tables.
        task: (target pos (B, 1, 3), target rotation (B, 1, 3, 3), task tables, feed-forward twist (B, 6),
            feed-forward mask (6,), gain [1/s], row weights (6,)).
        box: (dt [s], v_max, q_min, q_max, accel_max (n,), use_accel).
        rows: (distance (R,), normal (R, 3), J_a - J_b (R, 3, n), env (R,) ascending, d_safe, gamma).
        K: Collision rows per environment in the QP (padding).
        posture_args: (mid-range (n,), posture gain [1/s], posture weight, damping).
    Returns:
        (P, c, A, l, u, scale, x_exact, exact) as app.ik._qp_kernel.assemble_batch, and the task error (B, 6).
    """
    tgt_pos, tgt_rot, tables, ff, ff_mask, gain, w = task
    dt, v_max, q_min, q_max, accel, use_accel = box
    distance, normal, J_ab, env, d_safe, gamma = rows
    mid, posture_gain, posture_weight, damping = posture_args
    B, n = q.shape
    L = model.parent.shape[0]
    P, c, A = np.empty((B, n, n)), np.empty((B, n)), np.zeros((B, n + K, n))
    l, u, scale = np.empty((B, n + K)), np.empty((B, n + K)), np.ones(B)
    x_exact, exact, err = np.zeros((B, n)), np.zeros(B, dtype=np.bool_), np.empty((B, 6))
    R, p, N = np.empty((L, 3, 3)), np.empty((L, 3)), np.empty((n, n))
    J, V, lo, hi, post = np.empty((6, n)), np.empty(6), np.empty(n), np.empty(n), np.empty(n)
    G, g_lo, g_hi = np.zeros((K, n)), np.empty(K), np.full(K, OSQP_INF)
    r = 0
    for b in range(B):
        frames_one(q[b], model, R, p)
        residual_one(R, p, tgt_pos[b], tgt_rot[b], tables, err[b:b + 1])
        task_jacobian_one(R, p, kin, tables, J)
        for i in range(6):
            V[i] = (gain * err[b, i] + ff[b, i] * ff_mask[i]) * w[i]
            J[i, :] *= w[i]
        joint_box_one(q[b], v[b], dt, v_max, q_min, q_max, accel, use_accel, True, lo, hi)
        count = 0
        while r < env.shape[0] and env[r] == b:
            if count < K:
                g_lo[count] = distance_row_one(distance[r], normal[r], J_ab[r], d_safe, gamma, dt, G[count])
                count += 1
            r += 1
        for i in range(n):
            post[i] = posture_gain * (mid[i] - q[b, i])
        scale[b] = assemble_one(J, V, lo, hi, G, g_lo, g_hi, count, post, posture_weight, damping, True, N,
                                P[b], c[b], A[b], l[b], u[b])
        exact[b] = exact_solution_one(P[b], c[b], A[b], l[b], u[b], x_exact[b])
    return P, c, A, l, u, scale, x_exact, exact, err
