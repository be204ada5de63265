"""Differential IK: desired twist -> joint velocities by one damped solve, with a secondary
objective projected into the task's nullspace, and the manipulability measure."""

from __future__ import annotations

import numpy as np

from app.errors import InputError


def damped_pinv(J: np.ndarray, damping: float) -> np.ndarray:
    """J^T (J J^T + damping^2 I)^-1. J (..., m, n) -> (..., n, m)."""
    m = J.shape[-2]
    JJt = J @ np.swapaxes(J, -1, -2) + damping**2 * np.eye(m)
    return np.swapaxes(np.linalg.solve(JJt, J), -1, -2)


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
    Jp = damped_pinv(Jw, damping)
    qdot = np.einsum("...nm,...m->...n", Jp, Vw)
    if qdot_secondary is not None:
        N = np.eye(J.shape[-1]) - Jp @ Jw
        qdot = qdot + np.einsum("...nk,...k->...n", N, qdot_secondary)
    return qdot


def manipulability(J: np.ndarray) -> np.ndarray:
    """Yoshikawa's measure sqrt(det(J J^T)). J (..., m, n) -> (...); 0 at singularities."""
    return np.sqrt(np.maximum(np.linalg.det(J @ np.swapaxes(J, -1, -2)), 0.0))


def mid_range_velocity(q: np.ndarray, q_min: np.ndarray, q_max: np.ndarray, gain: float = 1.0) -> np.ndarray:
    """Velocity towards the middle of the joint ranges, scaled by each range. Shape (..., n)."""
    span = np.where(np.isfinite(q_max - q_min), q_max - q_min, 2 * np.pi)
    mid = np.where(np.isfinite(q_max - q_min), 0.5 * (q_min + q_max), 0.0)
    return gain * (mid - q) / span


def manipulability_gradient(jacobian_fn, q: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Gradient of manipulability(jacobian_fn(q)) by central differences. q (n,) -> (n,)."""
    grad = np.zeros_like(q)
    for k in range(len(q)):
        dq = np.zeros_like(q)
        dq[k] = h
        grad[k] = (manipulability(jacobian_fn(q + dq)) - manipulability(jacobian_fn(q - dq))) / (2 * h)
    return grad
