"""Boundary checks for array arguments: shape, finiteness, quaternions, masks.

Each helper raises :class:`~app.errors.InputError` with the argument's name, the
shape or value received and what is allowed, before any numpy call can fail deep down.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from app.errors import InputError


def as_float_array(value: object, name: str) -> np.ndarray:
    """``value`` as a float64 array, or InputError if it is not numeric."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric, got {type(value).__name__} {value!r:.80}") from None
    return arr


def check_finite(arr: np.ndarray, name: str) -> np.ndarray:
    """Raise InputError naming the first bad entry if ``arr`` holds NaN or inf."""
    if np.isfinite(arr).all():
        return arr
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{name} contains NaN or inf (first at index {idx}, value {arr[idx]})")
    return arr


def as_vectors(value: object, name: str, size: int) -> np.ndarray:
    """A finite array of shape (..., size). ``size`` names the required last dimension."""
    arr = as_float_array(value, name)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise InputError(f"{name} must have shape (..., {size}), got shape {arr.shape}")
    return check_finite(arr, name)


def as_point(value: object, name: str) -> np.ndarray:
    """One finite point (3,) [m]; InputError naming ``name`` otherwise."""
    arr = as_float_array(value, name)
    if arr.shape != (3,):
        raise InputError(f"{name} must be one point of shape (3,), got shape {arr.shape}")
    return check_finite(arr, name)


def as_quaternions(value: object, name: str) -> np.ndarray:
    """Finite (w, x, y, z) quaternions of shape (..., 4), normalised; zero norm is an error."""
    quat = as_vectors(value, name, 4)
    scale = np.abs(quat).max(axis=-1, keepdims=True)  # scaled first: 1e200 or 1e-200 entries stay finite
    if scale.min() == 0.0:
        raise InputError(f"{name} contains a zero quaternion; give (w, x, y, z) with nonzero norm")
    quat = quat / scale
    return quat / np.sqrt((quat * quat).sum(axis=-1, keepdims=True))


def as_rotation_matrices(value: object, name: str) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of finite (w, x, y, z) quaternions (..., 4), normalised first; zero norm
    is an error. One compiled pass: the validation and the conversion of a pose target."""
    quat = as_vectors(value, name, 4)
    rot, smallest = quat_to_matrix_batch(np.ascontiguousarray(quat.reshape(-1, 4)))
    if smallest == 0.0:
        raise InputError(f"{name} contains a zero quaternion; give (w, x, y, z) with nonzero norm")
    return rot.reshape(quat.shape[:-1] + (3, 3))


def as_mask(value: Sequence[bool], name: str) -> np.ndarray:
    """A boolean mask of length 3."""
    arr = np.asarray(value)
    if arr.shape != (3,) or not (arr.dtype == bool or ((arr == 0) | (arr == 1)).all()):
        raise InputError(f"{name} must be 3 booleans (x, y, z), got {value!r}")
    return arr.astype(bool)


@njit(cache=True)
def quat_to_matrix_batch(quat):
    """(N, 4) (w, x, y, z), normalised here (scaled by the largest entry first, so that huge or tiny ones stay
    finite) -> ((N, 3, 3) rotation matrices, the smallest largest-entry seen); a zero quaternion gives the
    identity (callers refuse it by the returned value, 0)."""
    out = np.empty((quat.shape[0], 3, 3))
    smallest = np.inf
    for i in range(quat.shape[0]):
        m = max(abs(quat[i, 0]), abs(quat[i, 1]), abs(quat[i, 2]), abs(quat[i, 3]))
        smallest = min(smallest, m)
        if m == 0.0:
            m = 1.0
        w, x, y, z = quat[i, 0] / m, quat[i, 1] / m, quat[i, 2] / m, quat[i, 3] / m
        n2 = w * w + x * x + y * y + z * z
        s = 1.0 / n2 if n2 > 0.0 else 0.0
        out[i, 0, 0] = 1 - 2 * s * (y * y + z * z)
        out[i, 0, 1] = 2 * s * (x * y - w * z)
        out[i, 0, 2] = 2 * s * (x * z + w * y)
        out[i, 1, 0] = 2 * s * (x * y + w * z)
        out[i, 1, 1] = 1 - 2 * s * (x * x + z * z)
        out[i, 1, 2] = 2 * s * (y * z - w * x)
        out[i, 2, 0] = 2 * s * (x * z - w * y)
        out[i, 2, 1] = 2 * s * (y * z + w * x)
        out[i, 2, 2] = 1 - 2 * s * (x * x + y * y)
    return out, smallest
