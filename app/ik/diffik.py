"""Differential IK: desired twist -> joint velocities by one damped solve, with a secondary
objective projected into the task's nullspace, and the manipulability measure.

The damped pseudo-inverse and the nullspace projector are the compiled ones the QP uses
(app.ik._linalg); the posture velocity is the posture task's (app.ik.tasks.posture).
"""

from __future__ import annotations

import numpy as np

from app.errors import InputError
from app.ik._linalg import damped_pinv_one, nullspace_projector_one
from app.ik.tasks.posture import posture_velocity


def _per_matrix(kernel, J: np.ndarray, damping: float, out_shape) -> np.ndarray:
    J = np.ascontiguousarray(J, dtype=float)
    flat = J.reshape((-1,) + J.shape[-2:])
    out = np.empty((len(flat),) + out_shape)
    for b in range(len(flat)):
        kernel(flat[b], float(damping), out[b])
    return out.reshape(J.shape[:-2] + out_shape)


def damped_pinv(J: np.ndarray, damping: float) -> np.ndarray:
    """J^T (J J^T + damping^2 I)^-1. J (..., m, n) -> (..., n, m)."""
    return _per_matrix(damped_pinv_one, J, damping, (J.shape[-1], J.shape[-2]))


def nullspace_projector(J: np.ndarray, damping: float) -> np.ndarray:
    """I - J^+ J with the damped pseudo-inverse. J (..., m, n) -> (..., n, n)."""
    return _per_matrix(nullspace_projector_one, J, damping, (J.shape[-1], J.shape[-1]))


def diff_ik(J: np.ndarray, V: np.ndarray, *, damping: float = 1e-3, weights: np.ndarray | None = None,
            qdot_secondary: np.ndarray | None = None) -> np.ndarray:
    """Joint velocities tracking a twist, plus a secondary motion in the nullspace of the task.

    qdot = J# V + (I - J# J) qdot_secondary, with J# the damped pseudo-inverse of the weighted
    Jacobian. Rows of J that are all zero (masked task rows) constrain nothing, so a 5-D task on
    a 6-DOF arm leaves one direction to the secondary objective.

    Args:
        J: Task Jacobian. Shape (..., m, n).
        V: Desired task velocity (e.g. twist, linear then angular). Shape (..., m).
        damping: lambda [m/rad scale]; bounds the step near singularities.
        weights: Row weights (e.g. characteristic length on rotation rows). Shape (m,).
        qdot_secondary: Preferred joint velocity. Shape (..., n).
    Returns:
        Shape (..., n).
    """
    J, V = np.asarray(J, dtype=float), np.asarray(V, dtype=float)
    if J.shape[-2] != V.shape[-1]:
        raise InputError(f"J has {J.shape[-2]} rows but V has {V.shape[-1]} entries")
    w = np.ones(J.shape[-2]) if weights is None else np.asarray(weights, dtype=float)
    Jw, Vw = J * w[:, None], V * w
    qdot = np.einsum("...nm,...m->...n", damped_pinv(Jw, damping), Vw)
    if qdot_secondary is not None:
        qdot = qdot + np.einsum("...nk,...k->...n", nullspace_projector(Jw, damping), qdot_secondary)
    return qdot


def manipulability(J: np.ndarray) -> np.ndarray:
    """Yoshikawa's measure sqrt(det(J J^T)). J (..., m, n) -> (...); 0 at singularities."""
    return np.sqrt(np.maximum(np.linalg.det(J @ np.swapaxes(J, -1, -2)), 0.0))


def mid_range_velocity(q: np.ndarray, q_min: np.ndarray, q_max: np.ndarray, gain: float = 1.0) -> np.ndarray:
    """The posture velocity towards the middle of the joint ranges (0 where unlimited). Shape (..., n)."""
    finite = np.isfinite(q_max - q_min)
    mid = np.where(finite, 0.5 * (np.where(finite, q_min, 0.0) + np.where(finite, q_max, 0.0)), 0.0)
    return posture_velocity(np.asarray(q, dtype=float), mid, gain)


def manipulability_gradient(jacobian_fn, q: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Gradient of manipulability(jacobian_fn(q)) by central differences. q (n,) -> (n,)."""
    grad = np.zeros_like(q)
    for k in range(len(q)):
        dq = np.zeros_like(q)
        dq[k] = h
        grad[k] = (manipulability(jacobian_fn(q + dq)) - manipulability(jacobian_fn(q - dq))) / (2 * h)
    return grad
