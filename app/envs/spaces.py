"""The Gymnasium spaces of an environment: observations as LeRobot reads them (``agent_pos``, ``pixels`` per
camera, ``environment_state``) and each action mode's bounds, from the world's robot and options."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from app.dataset.joint_names import GRIPPER_SLOT, JOINTS_PER_ARM
from app.errors import InputError

STATE_SLACK = 0.1  # [rad] or [m] beyond the joint limits that a measured agent_pos may read (contacts push)
REACH = 1.5  # [m]: an end-effector position target within this of the base on each axis
DELTA_POS, DELTA_ROT = 0.1, 0.5  # [m], [rad]: the largest change an ee_delta action asks per step


def joint_bounds(world) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the layout's values: each arm DOF's limits, each gripper's finger range."""
    layout, m = world.layout, world.robot.model
    if layout.dof_map is None:
        return np.array(m.q_lower, dtype=float), np.array(m.q_upper, dtype=float)
    low, high = np.zeros(layout.n_values), np.zeros(layout.n_values)
    for col, dof in zip(layout.dof_map.columns, layout.dof_map.dofs):  # a gripper slot: its finger DOFs' range
        low[col], high[col] = m.q_lower[dof], m.q_upper[dof]
    if layout.grippers:  # a gripper's slot: from open to closed
        f_lo, f_hi = layout.finger_bounds()
        for a in range(len(layout.arms)):
            low[a * JOINTS_PER_ARM + GRIPPER_SLOT], high[a * JOINTS_PER_ARM + GRIPPER_SLOT] = f_lo[a], f_hi[a]
    return low, high


def action_space(world, mode: str) -> spaces.Box:
    """The action space of ``mode`` (app.envs.options.EnvOptions.action_mode)."""
    if mode == "joint":
        low, high = joint_bounds(world)
        return spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
    if not world.layout.grippers:
        raise InputError(f"action_mode {mode!r} ends each arm's action with its gripper's finger position, and the "
                         f"robot of {world.run.name} (scene {world.run.scene}) has no gripper (robot.gripper): use "
                         "action_mode 'joint' (app.eval --action-mode joint), which drives the fingers as joints")
    f_lo, f_hi = world.layout.finger_bounds()
    p = world.robot.base_frames()[1]
    rows_lo, rows_hi = [], []
    for a in range(len(world.layout.arms)):
        if mode == "ee_pose":
            rows_lo += [*(p - REACH), -1, -1, -1, -1, f_lo[a]]
            rows_hi += [*(p + REACH), 1, 1, 1, 1, f_hi[a]]
        else:
            rows_lo += [-DELTA_POS] * 3 + [-DELTA_ROT] * 3 + [f_lo[a]]
            rows_hi += [DELTA_POS] * 3 + [DELTA_ROT] * 3 + [f_hi[a]]
    return spaces.Box(np.array(rows_lo, np.float32), np.array(rows_hi, np.float32), dtype=np.float32)


def observation_space(world, options, cameras) -> spaces.Dict:
    """The observation space: ``agent_pos`` (n_values,), ``pixels`` {camera: (h, w, 3) uint8},
    ``environment_state`` (every scene object's pose, 7 each, then an object task's place target x, y, as
    app.record writes it; absent without objects), as options ask."""
    out = {}
    if options.agent_pos:
        low, high = joint_bounds(world)
        out["agent_pos"] = spaces.Box((low - STATE_SLACK).astype(np.float32), (high + STATE_SLACK).astype(np.float32),
                                      dtype=np.float32)
    n = environment_state_size(world)
    if options.environment_state and n:
        out["environment_state"] = spaces.Box(-np.inf, np.inf, (n,), dtype=np.float32)
    if options.pixels:
        out["pixels"] = spaces.Dict({c.name: spaces.Box(0, 255, (c.height, c.width, 3), dtype=np.uint8)
                                     for c in cameras})
    return spaces.Dict(out)


def environment_state_size(world) -> int:
    """7 values per scene object (position, quat wxyz), then 2 for the place target (x, y) of an object task."""
    return 7 * len(world.scene.objects) + (2 if world.object_name is not None else 0)
