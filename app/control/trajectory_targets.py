"""Waypoints of end-effector poses sampled at the control rate: positions linear between waypoints, orientations
by spherical interpolation, and the target's own velocity at every tick (what a controller feeds forward and
what tells a policy's jump from a lagging arm)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.errors import InputError
from app.kinematics.rotations import quat_conjugate, quat_exp, quat_log, quat_multiply, quat_to_matrix


class TickTargets(NamedTuple):
    """Targets at every control tick, k arms. t (n,) [s]; pos (n, k, 3) [m]; quat (n, k, 4) (w, x, y, z);
    vel (n, k, 3) [m/s] and omega (n, k, 3) [rad/s]: the motion from this tick to the next (0 at the last);
    twist_in (n, k, 6): the motion from the previous tick to this one, linear then angular (0 at the first).
    All in the frame the waypoints are given in."""

    t: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    twist_in: np.ndarray


def _slerp(q0: np.ndarray, q1: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Spherical interpolation of unit quaternions q0, q1 (n, k, 4) at fractions u (n,), the short way."""
    q1 = np.where(np.sum(q0 * q1, axis=-1, keepdims=True) < 0, -q1, q1)
    rel = quat_log(quat_multiply(quat_conjugate(q0), q1))
    return quat_multiply(q0, quat_exp(rel * u[:, None, None]))


def angular_velocity(quat: np.ndarray, dt: float) -> np.ndarray:
    """World-frame angular velocity [rad/s] from each quaternion to the next, dt apart. (n, k, 4) -> (n - 1, k, 3)."""
    R = quat_to_matrix(quat)
    rel = np.matmul(R[1:], np.swapaxes(R[:-1], -1, -2))  # R_{i+1} R_i^T: the step in the fixed frame
    w = 0.5 * np.stack([rel[..., 2, 1] - rel[..., 1, 2], rel[..., 0, 2] - rel[..., 2, 0],
                        rel[..., 1, 0] - rel[..., 0, 1]], axis=-1)
    sin = np.linalg.norm(w, axis=-1, keepdims=True)
    cos = 0.5 * (np.trace(rel, axis1=-2, axis2=-1)[..., None] - 1.0)
    angle = np.arctan2(sin, cos)
    return np.where(sin > 1e-12, w / np.where(sin > 1e-12, sin, 1.0) * angle, w) / dt


def sample_ticks(t: np.ndarray, pos: np.ndarray, quat: np.ndarray, rate: float) -> TickTargets:
    """Waypoints t (m,) [s] strictly increasing, pos (m, k, 3), quat (m, k, 4) sampled every 1/rate [s] from t[0]
    to t[-1] (the last tick at or before it)."""
    if not np.isfinite(rate) or rate <= 0:
        raise InputError(f"the control rate must be a positive number of Hz, got {rate}")
    n = int(np.floor((t[-1] - t[0]) * rate + 1e-9)) + 1
    ticks = t[0] + np.arange(n) / rate
    i = np.clip(np.searchsorted(t, ticks, side="right") - 1, 0, len(t) - 2)
    u = np.clip((ticks - t[i]) / (t[i + 1] - t[i]), 0.0, 1.0)
    p = pos[i] + (pos[i + 1] - pos[i]) * u[:, None, None]
    q = _slerp(quat[i], quat[i + 1], u)
    dt = 1.0 / rate
    v, w = np.zeros_like(p), np.zeros_like(p)
    if n > 1:
        v[:-1] = np.diff(p, axis=0) / dt
        w[:-1] = angular_velocity(q, dt)
    twist_in = np.zeros(p.shape[:-1] + (6,))
    twist_in[1:, :, :3], twist_in[1:, :, 3:] = v[:-1], w[:-1]
    return TickTargets(ticks, p, q, v, w, twist_in)
