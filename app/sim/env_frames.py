"""Argument checks and frame changes of the scene robot's Genesis-style methods (no PyBullet).

Genesis's meaning: every pose a robot takes or returns is in its own environment's frame (the
world frame moved to that environment's grid origin, unrotated); the robot's base pose is
given in that frame. In a scene built with ``n_envs`` every per-environment array leads with
one row per selected environment (``envs_idx``, default all); without ``n_envs`` that axis is
absent. Indices (``envs_idx``, ``dofs_idx_local``, ``qs_idx_local``, ``links_idx_local``) are
checked to be integers in range.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from app.errors import InputError
from app.ik.api import link_entries
from app.validation import as_float_array, as_quaternions, check_finite


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
    if len(np.unique(arr)) != len(arr):
        twice = sorted({int(i) for i in arr if np.count_nonzero(arr == i) > 1})
        raise InputError(f"{name} {arr.tolist()} names {twice} more than once: each of {what} at most once")
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
        if self.batched and arr.shape == (n, width):
            return arr
        if arr.shape == (width,):
            return arr.reshape(1, width) if n == 1 else np.broadcast_to(arr, (n, width))
        expected = f"({n}, {width}) (one row per environment addressed) or ({width},)" if self.batched \
            else f"({width},)"
        raise InputError(f"{name} must have shape {expected}, got {arr.shape}")

    def out(self, arr: np.ndarray) -> np.ndarray:
        """``arr`` (len(idx), ...) as returned to the caller: the environment axis dropped when unbatched."""
        return arr if self.batched else arr[0]


def solve_in_envs(robot, links, poss, quats, local_points, init, genesis: tuple, envs_idx, kwargs: dict):
    """The scene robot's IK (app.sim.robot.Robot): environment-frame targets -> base frame -> one multi-link
    solve of the model, its position mask and errors in the environment's axes. ``genesis``: the Genesis
    arguments after init_qpos, in order. Returns an IKResult (link axis kept)."""
    envs = robot.envs(envs_idx)
    if not isinstance(links, (list, tuple)) or not links:
        raise InputError(f"links must be a non-empty list of links, got {links!r:.80}")
    names = [l.name if hasattr(l, "idx_local") else l for l in links]
    poss, quats = link_entries(poss, len(names), "poss"), link_entries(quats, len(names), "quats")
    poss_b, quats_b = [], []
    for i, (p, q) in enumerate(zip(poss, quats)):
        p = None if p is None else envs.rows(p, f"poss[{i}]" if len(names) > 1 else "pos", 3)
        q = None if q is None else envs.rows(q, f"quats[{i}]" if len(names) > 1 else "quat", 4)
        p_b, q_b = robot.base.targets_to_base(p, None if q is None else as_quaternions(q, "quat"))
        poss_b.append(None if p_b is None else envs.out(p_b))
        quats_b.append(None if q_b is None else envs.out(q_b))
    init = robot.get_qpos(envs_idx=envs_idx) if init is None else envs.out(envs.rows(init, "init_qpos", robot.n_dofs))
    if not np.array_equal(robot.base.R, np.eye(3)):
        kwargs = dict(kwargs, frame_rotation=robot.base.R)
    if kwargs.get("branch") is not None:  # one link on a chosen closed-form branch (app.ik.branch_choice)
        if len(names) != 1:
            raise InputError("branch= chooses one link's closed-form branch; give one link")
        one = robot.model.inverse_kinematics(names[0], poss_b[0], quats_b[0], None if not local_points else
                                             local_points[0], init, *genesis, return_info=True, **kwargs)
        return dataclasses.replace(one, pos_err=one.pos_err[..., None], rot_err=one.rot_err[..., None],
                                   err=one.err[..., None, :])  # the link axis, as the multi-link call keeps it
    return robot.model.inverse_kinematics_multilink(names, poss_b, quats_b, local_points, init, *genesis,
                                                    return_info=True, **kwargs)
