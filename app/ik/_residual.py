"""The masked pose residual of link targets and its Jacobian, compiled (one implementation).

Used by the LM loop (app.ik._lm), the velocity tasks (app.ik.tasks) and the controller's tick
(app.ik.tasks.frame, in the QP builder). Residual = target minus current, expressed in the task's
mask frame (``frame``: a rotation of the base frame; identity unless a scene robot asks for its
environment's axes): position [m] per masked axis (a mask per link), then the rotation vector [rad] of R_target R_current^T (ROT_FULL), or the turn that aligns one link
axis with the target's (ROT_AXIS), or nothing (ROT_NONE).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.kinematics._fk_kernels import frames_one, jacobian_one, so3_log_one

ROT_NONE, ROT_AXIS, ROT_FULL = 0, 1, 2


@njit(cache=True)
def residual_one(R, p, tgt_pos, tgt_rot, task, err):
    """Masked residual (target minus current) of one configuration.

    Args:
        R, p: Link frames. Shapes (L, 3, 3), (L, 3).
        tgt_pos, tgt_rot: Targets. Shapes (T, 3), (T, 3, 3).
        task: TaskTables (app.ik.ik_tables).
        err: Output, unweighted: position [m] then rotation vector [rad]. Shape (T, 6).
    """
    links, local_points, rot_mode, rot_axis, pos_mask = task.links, task.local_points, task.rot_mode, task.rot_axis, \
        task.pos_mask
    Rc_Rt = np.empty((3, 3))
    F = task.frame
    rotated = not (F[0, 0] == 1.0 and F[1, 1] == 1.0 and F[2, 2] == 1.0)  # orthonormal: else the identity
    for t in range(links.shape[0]):
        link = links[t]
        Rl = R[link]
        lp = local_points[t]
        d0 = tgt_pos[t, 0] - (p[link, 0] + Rl[0, 0] * lp[0] + Rl[0, 1] * lp[1] + Rl[0, 2] * lp[2])
        d1 = tgt_pos[t, 1] - (p[link, 1] + Rl[1, 0] * lp[0] + Rl[1, 1] * lp[1] + Rl[1, 2] * lp[2])
        d2 = tgt_pos[t, 2] - (p[link, 2] + Rl[2, 0] * lp[0] + Rl[2, 1] * lp[1] + Rl[2, 2] * lp[2])
        if rotated:  # in the mask frame
            d0, d1, d2 = (F[0, 0] * d0 + F[0, 1] * d1 + F[0, 2] * d2, F[1, 0] * d0 + F[1, 1] * d1 + F[1, 2] * d2,
                          F[2, 0] * d0 + F[2, 1] * d1 + F[2, 2] * d2)
        err[t, 0] = d0 if pos_mask[t, 0] else 0.0
        err[t, 1] = d1 if pos_mask[t, 1] else 0.0
        err[t, 2] = d2 if pos_mask[t, 2] else 0.0
        err[t, 3:] = 0.0
        mode = rot_mode[t]
        if mode == ROT_FULL:
            for r in range(3):
                for c in range(3):
                    Rc_Rt[r, c] = tgt_rot[t, r, 0] * Rl[c, 0] + tgt_rot[t, r, 1] * Rl[c, 1] + tgt_rot[t, r, 2] * Rl[c, 2]
            so3_log_one(Rc_Rt, err[t, 3:])
        elif mode == ROT_AXIS:
            a, b = Rl[:, rot_axis], tgt_rot[t, :, rot_axis]
            cx, cy, cz = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
            s = np.sqrt(cx * cx + cy * cy + cz * cz)
            angle = np.arctan2(s, a[0] * b[0] + a[1] * b[1] + a[2] * b[2])
            if s > 1e-12:
                err[t, 3], err[t, 4], err[t, 5] = angle * cx / s, angle * cy / s, angle * cz / s
            else:  # antiparallel: turn by pi about another axis of the link, perpendicular to a
                f = Rl[:, (rot_axis + 1) % 3]
                err[t, 3], err[t, 4], err[t, 5] = angle * f[0], angle * f[1], angle * f[2]
        if rotated and mode != ROT_NONE:
            a0, a1, a2 = err[t, 3], err[t, 4], err[t, 5]
            for r in range(3):
                err[t, 3 + r] = F[r, 0] * a0 + F[r, 1] * a1 + F[r, 2] * a2


@njit(cache=True)
def task_jacobian_one(R, p, kin, task, J):
    """d(current)/dq of :func:`residual_one`'s quantities, masked alike, into J (6 T, n_dofs).

    kin: The model's JacobianTables; the other arguments as in residual_one.
    """
    axis = kin.axis
    links, local_points, rot_mode, rot_axis, pos_mask = task.links, task.local_points, task.rot_mode, task.rot_axis, \
        task.pos_mask
    Jl = np.empty((6, axis.shape[0]))
    F = task.frame
    rotated = not (F[0, 0] == 1.0 and F[1, 1] == 1.0 and F[2, 2] == 1.0)  # orthonormal: else the identity
    for t in range(links.shape[0]):
        link = links[t]
        jacobian_one(R, p, link, local_points[t], kin, Jl)
        if rotated:
            _rotate_rows(F, Jl, 0)  # position rows in the mask frame
        for r in range(3):
            if not pos_mask[t, r]:
                Jl[r, :] = 0.0
        mode = rot_mode[t]
        if mode == ROT_NONE:
            Jl[3:, :] = 0.0
        elif mode == ROT_AXIS:  # spin about the aligned axis does not change the error
            a = R[link][:, rot_axis]
            for k in range(Jl.shape[1]):
                d = a[0] * Jl[3, k] + a[1] * Jl[4, k] + a[2] * Jl[5, k]
                for r in range(3):
                    Jl[3 + r, k] -= d * a[r]
        if rotated and mode != ROT_NONE:  # rotation rows in the mask frame, as the error
            _rotate_rows(F, Jl, 3)
        J[6 * t:6 * t + 6, :] = Jl


@njit(cache=True)
def _rotate_rows(F, J, r0):
    """Rows r0..r0+2 of J (6, n) replaced by F (3, 3) times them."""
    for k in range(J.shape[1]):
        a, b, c = J[r0, k], J[r0 + 1, k], J[r0 + 2, k]
        for r in range(3):
            J[r0 + r, k] = F[r, 0] * a + F[r, 1] * b + F[r, 2] * c


@njit(cache=True)
def residual_batch(q, model, kin, tgt_pos, tgt_rot, task, with_jacobian):
    """Masked residuals (and their Jacobians) of a batch. q (B, n) -> err (B, T, 6), J (B, 6 T, n)
    (J is an empty (B, 0, n) array when ``with_jacobian`` is False)."""
    B, T, L = q.shape[0], tgt_pos.shape[1], model.parent.shape[0]
    R, p = np.empty((L, 3, 3)), np.empty((L, 3))
    err = np.empty((B, T, 6))
    J = np.empty((B, 6 * T if with_jacobian else 0, q.shape[1]))
    for b in range(B):
        frames_one(q[b], model, R, p)
        residual_one(R, p, tgt_pos[b], tgt_rot[b], task, err[b])
        if with_jacobian:
            task_jacobian_one(R, p, kin, task, J[b])
    return err, J
