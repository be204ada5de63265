"""Argument checks and frame changes of the scene robot's Genesis-style methods (no PyBullet).

Genesis's meaning: every pose a robot takes or returns is in its own environment's frame (the
world frame moved to that environment's grid origin, unrotated); the robot's base pose is
given in that frame. In a scene built with ``n_envs`` every per-environment array leads with
one row per selected environment (``envs_idx``, default all); without ``n_envs`` that axis is
absent. Indices (``envs_idx``, ``dofs_idx_local``, ``qs_idx_local``, ``links_idx_local``) are
checked to be integers in range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.errors import InputError
from app.validation import as_float_array, check_finite


def as_indices(value: object, name: str, count: int, what: str) -> np.ndarray:
    """``value`` (None: all, an int, a slice/range or a 1-D list of ints) as indices into ``count`` items."""
    if value is None:
        return np.arange(count)
    if isinstance(value, slice):
        return np.arange(count)[value]
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype == bool and arr.shape == (count,):
        return np.flatnonzero(arr)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"{name} must be integer indices of {what} (a list, an int or None), got {value!r:.80}")
    if arr.size and (arr.min() < 0 or arr.max() >= count):
        raise InputError(f"{name} {arr.tolist()} out of range: valid {what} are 0..{count - 1}")
    return arr.astype(np.int64)


@dataclass(frozen=True)
class EnvRows:
    """The environments a call addresses: ``idx`` into the scene's, and whether arrays carry that axis."""

    idx: np.ndarray
    batched: bool

    def rows(self, value: object, name: str, width: int) -> np.ndarray:
        """A finite per-environment array as (len(idx), width): (len(idx), width) in a batched scene, or one
        row (width,) for every addressed environment (Genesis broadcasts it too); (width,) unbatched."""
        arr = check_finite(as_float_array(value, name), name)
        n = len(self.idx)
        if arr.shape == (width,) or (self.batched and arr.shape == (n, width)):
            return np.broadcast_to(arr, (n, width))
        expected = f"({n}, {width}) (one row per environment addressed) or ({width},)" if self.batched \
            else f"({width},)"
        raise InputError(f"{name} must have shape {expected}, got {arr.shape}")

    def out(self, arr: np.ndarray) -> np.ndarray:
        """``arr`` (len(idx), ...) as returned to the caller: the environment axis dropped when unbatched."""
        return arr if self.batched else arr[0]
