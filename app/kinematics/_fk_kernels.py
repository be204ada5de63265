"""Compiled inner loops: forward kinematics, geometric Jacobians, rotation log.

Numba turns these loops over (batch, link) into machine code: numpy vectorisation pays
about 1 us of interpreter overhead per call on 3x3 blocks, which dominated
single-configuration FK (185 us -> ~5 us; scripts/bench_kinematics.py). They are the only
implementation of this math: RobotModel, the rotation helpers and the IK kernels call them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def rotate_about(axis, angle, out):
    """Rodrigues' formula into ``out`` (3, 3) for a unit axis (3,) and an angle [rad]."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0] = c + t * x * x
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = c + t * y * y
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = c + t * z * z


@njit(cache=True)
def matmul3(a, b, out):
    """out = a @ b for (3, 3) blocks, without a BLAS call."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]


@njit(cache=True)
def frames_one(q, fk, R, p):
    """Link frames of one configuration q (n_dofs,) into R (L, 3, 3) and p (L, 3); fk: FKTables."""
    frames_rows(q, fk, range(1, fk.parent.shape[0]), R, p)


@njit(cache=True)
def frames_rows(q, fk, rows, R, p):
    """The frames of links ``rows`` only (increasing, each with every link above it; the root's always) into R
    (L, 3, 3) and p (L, 3), as frames_one computes them; the other rows are left as they were."""
    parent, R_origin, p_origin, link_dof, axis, revolute = fk.parent, fk.R_origin, fk.p_origin, fk.link_dof, \
        fk.axis, fk.revolute
    R_loc = np.empty((3, 3))
    R_mot = np.empty((3, 3))
    p_loc = np.empty(3)
    R[0] = 0.0
    p[0] = 0.0
    R[0, 0, 0] = R[0, 1, 1] = R[0, 2, 2] = 1.0
    for i in rows:
        if i == 0:
            continue
        k, par = link_dof[i], parent[i]
        p_loc[:] = p_origin[i]
        if k >= 0 and revolute[k]:
            rotate_about(axis[k], q[k], R_mot)
            matmul3(R_origin[i], R_mot, R_loc)
        else:
            R_loc[:, :] = R_origin[i]
            if k >= 0:
                for r in range(3):
                    p_loc[r] += (R_origin[i, r, 0] * axis[k, 0] + R_origin[i, r, 1] * axis[k, 1]
                                 + R_origin[i, r, 2] * axis[k, 2]) * q[k]
        matmul3(R[par], R_loc, R[i])
        for r in range(3):
            p[i, r] = p[par, r] + R[par, r, 0] * p_loc[0] + R[par, r, 1] * p_loc[1] + R[par, r, 2] * p_loc[2]


@njit(cache=True)
def link_frames_kernel(q, fk):
    """Link frames of a batch. q (B, n_dofs), fk: FKTables -> R (B, L, 3, 3), p (B, L, 3)."""
    B, L = q.shape[0], fk.parent.shape[0]
    R = np.empty((B, L, 3, 3))
    p = np.empty((B, L, 3))
    for b in range(B):
        frames_one(q[b], fk, R[b], p[b])
    return R, p


@njit(cache=True)
def jacobian_one(R, p, link, local_point, jac, J):
    """Geometric Jacobian of a point on ``link`` into J (6, n_dofs), zeroed first.

    Args:
        R, p: Link frames of one configuration. Shapes (L, 3, 3), (L, 3).
        local_point: The point in the link frame. Shape (3,).
        jac: JacobianTables.
    """
    dof_link, axis, revolute, moves_link = jac.dof_link, jac.axis, jac.revolute, jac.ancestor[link]
    point, z = np.empty(3), np.empty(3)
    for r in range(3):
        point[r] = p[link, r] + R[link, r, 0] * local_point[0] + R[link, r, 1] * local_point[1] \
            + R[link, r, 2] * local_point[2]
    J[:, :] = 0.0
    for k in range(axis.shape[0]):
        if not moves_link[k]:
            continue
        j = dof_link[k]
        for r in range(3):
            z[r] = R[j, r, 0] * axis[k, 0] + R[j, r, 1] * axis[k, 1] + R[j, r, 2] * axis[k, 2]
        if revolute[k]:
            d0, d1, d2 = point[0] - p[j, 0], point[1] - p[j, 1], point[2] - p[j, 2]
            J[0, k] = z[1] * d2 - z[2] * d1
            J[1, k] = z[2] * d0 - z[0] * d2
            J[2, k] = z[0] * d1 - z[1] * d0
            J[3, k], J[4, k], J[5, k] = z[0], z[1], z[2]
        else:
            J[0, k], J[1, k], J[2, k] = z[0], z[1], z[2]


@njit(cache=True)
def jacobian_kernel(R, p, link, local_point, jac):
    """Jacobians of a batch. R (B, L, 3, 3), p (B, L, 3), local_point (B, 3), jac: JacobianTables
    -> (B, 6, n_dofs)."""
    B = R.shape[0]
    J = np.empty((B, 6, jac.axis.shape[0]))
    for b in range(B):
        jacobian_one(R[b], p[b], link, local_point[b], jac, J[b])
    return J


@njit(cache=True)
def matrix_to_quat_one(R, out):
    """(w, x, y, z) of a rotation matrix (3, 3), w >= 0, by Shepperd's method (stable at pi)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr >= R[0, 0] and tr >= R[1, 1] and tr >= R[2, 2]:
        out[0], out[1], out[2], out[3] = 1.0 + tr, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        out[0], out[1], out[2], out[3] = R[2, 1] - R[1, 2], 1.0 + R[0, 0] - R[1, 1] - R[2, 2], R[0, 1] + R[1, 0], \
            R[0, 2] + R[2, 0]
    elif R[1, 1] >= R[2, 2]:
        out[0], out[1], out[2], out[3] = R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], 1.0 - R[0, 0] + R[1, 1] - R[2, 2], \
            R[1, 2] + R[2, 1]
    else:
        out[0], out[1], out[2], out[3] = R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1], \
            1.0 - R[0, 0] - R[1, 1] + R[2, 2]
    norm = np.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2 + out[3] ** 2)
    if out[0] < 0.0:
        norm = -norm
    for i in range(4):
        out[i] /= norm


@njit(cache=True)
def quat_log_one(quat, out):
    """Rotation vector (3,) of a unit (w, x, y, z) quaternion, angle in [0, pi]; exact near 0 and pi."""
    w, x, y, z = quat[0], quat[1], quat[2], quat[3]
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    s = np.sqrt(x * x + y * y + z * z)
    if s < 1e-6:  # angle < 2e-6: Taylor series of 2 atan2(s, w) / s
        scale = 2.0 / w * (1.0 - s * s / (3.0 * w * w))
    else:
        scale = 2.0 * np.arctan2(s, w) / s
    out[0], out[1], out[2] = x * scale, y * scale, z * scale


@njit(cache=True)
def so3_log_one(R, out):
    """Rotation vector (3,) of a rotation matrix (3, 3)."""
    quat = np.empty(4)
    matrix_to_quat_one(R, quat)
    quat_log_one(quat, out)


@njit(cache=True)
def matrix_to_quat_batch(R):
    """(N, 3, 3) -> (N, 4) wxyz."""
    out = np.empty((R.shape[0], 4))
    for i in range(R.shape[0]):
        matrix_to_quat_one(R[i], out[i])
    return out


@njit(cache=True)
def quat_log_batch(quat):
    """(N, 4) -> (N, 3) rotation vectors."""
    out = np.empty((quat.shape[0], 3))
    for i in range(quat.shape[0]):
        quat_log_one(quat[i], out[i])
    return out


@njit(cache=True)
def point_jacobians_kernel(R, p, configs, links, points, jac):
    """Jacobians of base-frame points on links, each of its own configuration's frames.

    R (B, L, 3, 3), p (B, L, 3); configs, links (K,); points (K, 3) in the base frame; jac: JacobianTables
    -> (K, 6, n_dofs).
    """
    K = links.shape[0]
    J = np.empty((K, 6, jac.axis.shape[0]))
    local = np.empty(3)
    for k in range(K):
        Rl, pl = R[configs[k], links[k]], p[configs[k], links[k]]
        for c in range(3):  # R^T (x - p)
            local[c] = Rl[0, c] * (points[k, 0] - pl[0]) + Rl[1, c] * (points[k, 1] - pl[1]) \
                + Rl[2, c] * (points[k, 2] - pl[2])
        jacobian_one(R[configs[k]], p[configs[k]], links[k], local, jac, J[k])
    return J
