"""A batch of actions (n_envs, action_dim) checked and turned into the world's Command, in each action mode
(app.envs.options.EnvOptions.action_mode): joint goals, or end-effector targets (absolute, or changes from the
measured pose) with each gripper's finger position. Values outside the action space are clipped into it (a
policy's overshoot); a wrong shape or a value that is not a finite number is an InputError saying where."""

from __future__ import annotations

import numpy as np

from app.envs.world import Command, EnvWorld
from app.errors import InputError
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix, so3_exp
from app.validation import has_zero_quaternion, unit_quaternions


def checked(actions: object, space, n_envs: int) -> np.ndarray:
    """The actions as float (n_envs, dim), clipped into ``space``; InputError for a wrong shape or non-finite."""
    try:
        kind = np.asarray(actions).dtype.kind
    except (TypeError, ValueError):
        kind = "O"
    if kind in "cbUS":
        raise InputError(f"an action must be real numbers of shape ({n_envs}, {space.shape[0]}), got "
                         f"{np.asarray(actions).dtype} values")
    try:
        a = np.asarray(actions, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"an action must be numbers of shape ({n_envs}, {space.shape[0]}), got "
                         f"{type(actions).__name__}") from None
    if a.shape != (n_envs, space.shape[0]):
        raise InputError(f"actions must have shape ({n_envs}, {space.shape[0]}) (environments x action values), "
                         f"got {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        e, k = np.argwhere(bad)[0]
        raise InputError(f"action value {k} of environment {e} is {a[e, k]}: actions must be finite numbers")
    return np.clip(a, space.low, space.high)


def command(world: EnvWorld, mode: str, a: np.ndarray) -> tuple[Command, np.ndarray | None]:
    """(the Command, the end-effector goals (n_envs, n_arms, 7) of an ee mode or None) of checked actions ``a``."""
    q_now = world.robot.read_states()[0]
    if mode == "joint":
        q_goal, closing = world.layout.joint_goals(a, q_now)
        return Command(closing, q_goal=q_goal), None
    n, k = len(a), len(world.layout.arms)
    rows = a.reshape(n, k, -1)
    closing = world.layout.closing_of(rows[..., -1])
    if mode == "ee_pose":
        pos, quat = rows[..., :3], rows[..., 3:7]
        if has_zero_quaternion(quat):
            e, j = np.argwhere(np.abs(quat).max(axis=-1) == 0.0)[0]
            raise InputError(f"the quaternion of arm {world.layout.arms[j]!r} in environment {e} is zero: "
                             "an ee_pose action needs a rotation (w, x, y, z) with nonzero norm")
        quat = unit_quaternions(quat)
    else:
        pos_now, quat_now = world.layout.ee_poses(q_now)
        pos = pos_now + rows[..., :3]
        R = np.matmul(so3_exp(rows[..., 3:6].reshape(-1, 3)), quat_to_matrix(quat_now.reshape(-1, 4)))
        quat = matrix_to_quat(R).reshape(n, k, 4)
    return Command(closing, pos=pos, quat=quat), np.concatenate([pos, quat], axis=2)
