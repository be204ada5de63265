"""What a feedback motion (pick-and-place) sees of its environments at a control tick, gathered by the
composition layer from the simulator (app.episode.feedback) or made by a test. Every pose is in the environment's
frame; arrays lead with the environment axis."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Observation(NamedTuple):
    """q (n_envs, n_dofs) measured joints; ee_pos (n_envs, 3) [m], ee_rot (n_envs, 3, 3): the end effector;
    obj_pos (n_envs, 3) [m], obj_quat (n_envs, 4) wxyz, obj_speed (n_envs,) [m/s]: the task's object;
    closing (n_envs,): the fingers, 0 open .. 1 closed; contact (n_envs, n_sides): each finger touches the
    object; collided (n_envs,): a robot link touches the table, an obstacle or another object, or a link
    other than the fingers touches the task's object."""

    q: np.ndarray
    ee_pos: np.ndarray
    ee_rot: np.ndarray
    obj_pos: np.ndarray
    obj_quat: np.ndarray
    obj_speed: np.ndarray
    closing: np.ndarray
    contact: np.ndarray
    collided: np.ndarray
