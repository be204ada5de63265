"""What the loop records of each video frame: the state a picture, a dataset row or a camera is made from."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class FrameState(NamedTuple):
    """What one video frame shows, recorded during the run. t [s]; q (n_envs, n_dofs); targets in each
    environment's frame: pos (n_envs, T, 3) [m], quat (n_envs, T, 4) wxyz; status (n_envs,) EnvStatus codes."""

    t: float
    q: np.ndarray
    targets_pos: np.ndarray
    targets_quat: np.ndarray
    status: np.ndarray
    objects: np.ndarray | None = None  # (n_envs, n_objects, 7): position [m], quat wxyz, environment frames
    episode: np.ndarray | None = None  # (n_envs,) a pick-and-place's phase or failure (app.control.phases)
    marks: np.ndarray | None = None  # (n_envs, M, 3) [m] points marked on the picture (a pick's place target)
    gripper: np.ndarray | None = None  # (n_envs,) [m] the fingers' opening, where the robot has a gripper
    finger_goals: np.ndarray | None = None  # (n_envs, n_grippers) [m]: each gripper's commanded finger position
    # (Gripper.finger_goal), in the robot's gripper order
    paths: np.ndarray | None = None  # (n_envs, P, 3) [m] planned end-effector paths drawn (NaN: none), env frames
    motion: tuple | None = None  # (n_envs,) a limit the motion passed since the last frame, in a few words ('' none)
    verdict: np.ndarray | None = None  # (n_envs,) str: the task's judgement now, "success" or its failure reason
