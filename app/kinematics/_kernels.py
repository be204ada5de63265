"""Compiled inner loops of forward kinematics and the geometric Jacobian.

Numba turns these loops over (batch, link) into machine code: numpy vectorisation
pays ~1 us of overhead per call on 3x3 blocks, which dominated single-configuration
FK (185 us -> ~2 us measured by scripts/bench_kinematics.py). They are the only
implementation of this math; :class:`~app.kinematics.model.RobotModel` wraps them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _rotate_about(axis: np.ndarray, angle: float, out: np.ndarray) -> None:
    """Rodrigues' formula into ``out`` (3, 3) for a unit axis (3,)."""
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
def _matmul3(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a @ b for (3, 3) blocks, without a BLAS call."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]


@njit(cache=True)
def link_frames_kernel(q, parent, R_origin, p_origin, link_dof, axis, revolute):
    """Link frames of a kinematic tree.

    Args:
        q: Joint positions. Shape (B, n_dofs).
        parent: Parent link of each link, -1 for the root. Shape (L,).
        R_origin, p_origin: Joint origins in the parent frame. Shapes (L, 3, 3), (L, 3).
        link_dof: DOF that moves each link's joint, -1 if fixed. Shape (L,).
        axis: Unit joint axes in the joint frame. Shape (n_dofs, 3).
        revolute: True for revolute/continuous, False for prismatic. Shape (n_dofs,).
    Returns:
        R (B, L, 3, 3) and p (B, L, 3) in the root frame.
    """
    B, L = q.shape[0], parent.shape[0]
    R = np.empty((B, L, 3, 3))
    p = np.empty((B, L, 3))
    R_loc = np.empty((3, 3))
    p_loc = np.empty(3)
    R_mot = np.empty((3, 3))
    for b in range(B):
        for r in range(3):
            p[b, 0, r] = 0.0
            for c in range(3):
                R[b, 0, r, c] = 1.0 if r == c else 0.0
        for i in range(1, L):
            k, par = link_dof[i], parent[i]
            for r in range(3):
                p_loc[r] = p_origin[i, r]
                for c in range(3):
                    R_loc[r, c] = R_origin[i, r, c]
            if k >= 0 and revolute[k]:
                _rotate_about(axis[k], q[b, k], R_mot)
                _matmul3(R_origin[i], R_mot, R_loc)
            elif k >= 0:
                for r in range(3):
                    for c in range(3):
                        p_loc[r] += R_origin[i, r, c] * axis[k, c] * q[b, k]
            for r in range(3):
                acc = p[b, par, r]
                for c in range(3):
                    acc += R[b, par, r, c] * p_loc[c]
                    R[b, i, r, c] = (
                        R[b, par, r, 0] * R_loc[0, c] + R[b, par, r, 1] * R_loc[1, c] + R[b, par, r, 2] * R_loc[2, c]
                    )
                p[b, i, r] = acc
    return R, p


@njit(cache=True)
def jacobian_kernel(R, p, link, local_point, dof_link, axis, revolute, moves_link):
    """Geometric Jacobian of a point rigidly attached to ``link``.

    Args:
        R, p: Link frames. Shapes (B, L, 3, 3), (B, L, 3).
        link: Link index.
        local_point: The point in the link frame. Shape (B, 3).
        dof_link: Child link of each DOF's joint. Shape (n_dofs,).
        axis, revolute: As in :func:`link_frames_kernel`.
        moves_link: True where the DOF is an ancestor of ``link``. Shape (n_dofs,).
    Returns:
        Shape (B, 6, n_dofs): rows 0-2 linear, 3-5 angular, root frame.
    """
    B, n = R.shape[0], axis.shape[0]
    J = np.zeros((B, 6, n))
    point, z, d = np.empty(3), np.empty(3), np.empty(3)
    for b in range(B):
        for r in range(3):
            point[r] = p[b, link, r]
            for c in range(3):
                point[r] += R[b, link, r, c] * local_point[b, c]
        for k in range(n):
            if not moves_link[k]:
                continue
            j = dof_link[k]
            for r in range(3):
                z[r] = R[b, j, r, 0] * axis[k, 0] + R[b, j, r, 1] * axis[k, 1] + R[b, j, r, 2] * axis[k, 2]
                d[r] = point[r] - p[b, j, r]
            if revolute[k]:
                J[b, 0, k] = z[1] * d[2] - z[2] * d[1]
                J[b, 1, k] = z[2] * d[0] - z[0] * d[2]
                J[b, 2, k] = z[0] * d[1] - z[1] * d[0]
                J[b, 3, k], J[b, 4, k], J[b, 5, k] = z[0], z[1], z[2]
            else:
                J[b, 0, k], J[b, 1, k], J[b, 2, k] = z[0], z[1], z[2]
    return J
