"""Rotation utilities on batched arrays: wxyz quaternions, matrices, SO(3) exp/log.

Conventions: quaternions are (w, x, y, z), unit norm, returned with w >= 0. Every
function accepts any leading batch shape ``(...)``. The exp and log maps are exact
near 0 (Taylor branches) and near pi (the log goes through a quaternion extracted
with Shepperd's method, never dividing by sin(theta)).
"""

from __future__ import annotations

import numpy as np

from app.kinematics._fk_kernels import matrix_to_quat_batch, quat_log_batch
from app.validation import quat_to_matrix_batch, unit_quaternions

_SMALL = 1e-6


def skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrices. v: shape (..., 3). Returns shape (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def quat_normalize(quat: np.ndarray) -> np.ndarray:
    """Unit quaternions with w >= 0. quat: shape (..., 4), nonzero (entries of any finite size)."""
    quat = unit_quaternions(quat)
    return np.where(quat[..., :1] < 0.0, -quat, quat)


def quat_to_matrix(quat: np.ndarray) -> np.ndarray:
    """Rotation matrices of (w, x, y, z) quaternions (normalised first). Shape (..., 4) -> (..., 3, 3)."""
    q = np.asarray(quat, dtype=float)
    return quat_to_matrix_batch(np.ascontiguousarray(q.reshape(-1, 4)))[0].reshape(q.shape[:-1] + (3, 3))


def matrix_to_quat(rot: np.ndarray) -> np.ndarray:
    """(w, x, y, z) quaternions of rotation matrices, w >= 0 (Shepperd's method).

    rot: shape (..., 3, 3). Returns shape (..., 4). Stable for every angle, pi included:
    each case divides by the largest of 4w^2, 4x^2, 4y^2, 4z^2.
    """
    R = np.asarray(rot, dtype=float)
    flat = np.ascontiguousarray(R.reshape(-1, 3, 3))
    return matrix_to_quat_batch(flat).reshape(R.shape[:-2] + (4,))


def quat_multiply(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Hamilton product q1 * q2 of (w, x, y, z) quaternions. Shapes broadcast (..., 4)."""
    q1, q2 = np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    w1, v1 = q1[..., :1], q1[..., 1:]
    w2, v2 = q2[..., :1], q2[..., 1:]
    w = w1 * w2 - np.sum(v1 * v2, axis=-1, keepdims=True)
    v = w1 * v2 + w2 * v1 + np.cross(v1, v2)
    return np.concatenate([w, v], axis=-1)


def quat_conjugate(quat: np.ndarray) -> np.ndarray:
    """Inverse of unit (w, x, y, z) quaternions. Shape (..., 4)."""
    quat = np.asarray(quat, dtype=float)
    return quat * np.array([1.0, -1.0, -1.0, -1.0])


def so3_exp(rotvec: np.ndarray) -> np.ndarray:
    """Rotation matrices of rotation vectors (axis * angle [rad]). (..., 3) -> (..., 3, 3)."""
    w = np.asarray(rotvec, dtype=float)
    theta2 = np.sum(w * w, axis=-1)[..., None, None]
    theta = np.sqrt(theta2)
    small = theta < _SMALL
    safe = np.where(small, 1.0, theta)
    a = np.where(small, 1.0 - theta2 / 6.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - theta2 / 24.0, (1.0 - np.cos(safe)) / (safe * safe))
    K = skew(w)
    return np.eye(3) + a * K + b * (K @ K)


def quat_log(quat: np.ndarray) -> np.ndarray:
    """Rotation vectors of (w, x, y, z) quaternions, angle in [0, pi]. (..., 4) -> (..., 3)."""
    q = quat_normalize(quat)
    return quat_log_batch(np.ascontiguousarray(q.reshape(-1, 4))).reshape(q.shape[:-1] + (3,))


def so3_log(rot: np.ndarray) -> np.ndarray:
    """Rotation vectors of rotation matrices, angle in [0, pi]. (..., 3, 3) -> (..., 3)."""
    return quat_log(matrix_to_quat(rot))


def quat_exp(rotvec: np.ndarray) -> np.ndarray:
    """(w, x, y, z) quaternions of rotation vectors. (..., 3) -> (..., 4)."""
    w = np.asarray(rotvec, dtype=float)
    theta = np.linalg.norm(w, axis=-1, keepdims=True)
    small = theta < _SMALL
    half_sinc = np.where(small, 0.5 - theta**2 / 48.0, np.sin(theta / 2) / np.where(small, 1.0, theta))
    return quat_normalize(np.concatenate([np.cos(theta / 2), w * half_sinc], axis=-1))


def axis_angle_matrix(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotations by ``angle`` [rad] about unit ``axis``. axis (..., 3), angle (...) -> (..., 3, 3)."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)[..., None, None]
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def rpy_to_matrix(rpy: np.ndarray) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll). (..., 3) -> (..., 3, 3)."""
    rpy = np.asarray(rpy, dtype=float)
    ex, ey, ez = np.eye(3)
    return (
        axis_angle_matrix(ez, rpy[..., 2])
        @ axis_angle_matrix(ey, rpy[..., 1])
        @ axis_angle_matrix(ex, rpy[..., 0])
    )


def matrix_to_rpy(R: np.ndarray) -> tuple[float, float, float]:
    """URDF's fixed-axis roll, pitch, yaw [rad] of rotation matrix ``R`` (3, 3): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    pitch = float(np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0])))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:  # pitch at +-90 deg: roll and yaw share one axis, put it all in yaw
        return 0.0, pitch, float(np.arctan2(-R[0, 1], R[1, 1]))
    return float(np.arctan2(R[2, 1], R[2, 2])), pitch, float(np.arctan2(R[1, 0], R[0, 0]))


def wxyz_to_xyzw(quat: np.ndarray) -> np.ndarray:
    """Unit (x, y, z, w) quaternions for PyBullet from (w, x, y, z) ones of any finite size. Shape (..., 4).

    Normalised here because PyBullet normalises with an unscaled norm: entries of 1e-200 would underflow to
    the identity and 1e200 overflow to NaN."""
    return unit_quaternions(quat)[..., [1, 2, 3, 0]]


def xyzw_to_wxyz(quat: np.ndarray) -> np.ndarray:
    """Reorder PyBullet's (x, y, z, w) to (w, x, y, z). Shape (..., 4)."""
    return np.asarray(quat, dtype=float)[..., [3, 0, 1, 2]]


_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def axis_vector(name: str) -> np.ndarray:
    """A frame's axis by name ('x', '+y', '-z', ...) as a unit vector (3,)."""
    sign = -1.0 if name.startswith("-") else 1.0
    return sign * np.array(_AXES[name.lstrip("+-")])


def yaw_canonical(quat: np.ndarray, order: int) -> np.ndarray:
    """The orientation (..., 4) wxyz of an object symmetric about its own z axis under turns of 2 pi / ``order``
    (4: a square box, 2: an oblong one, 1: none, 0: every turn, a cylinder or sphere), reported as the equivalent
    one nearest the upright identity: q = swing * twist (twist about the body z), the twist's angle wrapped into
    [-pi / order, pi / order) (0 for order 0), w >= 0. Upright at yaw t: the yaw t wrapped; order 1: q itself
    (w >= 0)."""
    q = np.asarray(quat, dtype=float)
    twist = np.zeros_like(q)
    twist[..., 0], twist[..., 3] = q[..., 0], q[..., 3]
    norm = np.linalg.norm(twist, axis=-1, keepdims=True)
    twist = np.where(norm > 1e-12, twist / np.maximum(norm, 1e-12), np.array([1.0, 0.0, 0.0, 0.0]))
    swing = quat_multiply(q, quat_conjugate(twist))
    angle = 2 * np.arctan2(twist[..., 3], twist[..., 0])
    if order == 0:
        angle = np.zeros_like(angle)
    elif order > 1:
        period = 2 * np.pi / order
        angle = angle - period * np.floor(angle / period + 0.5)
    turned = np.stack([np.cos(angle / 2), np.zeros_like(angle), np.zeros_like(angle), np.sin(angle / 2)], axis=-1)
    out = quat_multiply(swing, turned)
    return np.where(out[..., :1] < 0, -out, out)
