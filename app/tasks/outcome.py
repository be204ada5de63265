"""What a task's ``evaluate`` reads of a step and what it returns, and the stages every object task shares.

Stages (the step's reward): 0 nothing, 1 a finger touched the object, 2 every finger of a gripper holds it, 3 held and
lifted ``LIFT`` above its start, 4 placed (as the task says: at its place target, on another object, in a bin, in a
hole), after having been lifted, with no collision at any step. A failure's reason: ``collision`` (an arm link touched
the table, an obstacle or another object, or a link other than the fingers touched the object, at any step), else by the
stage reached: ``not_touched``, ``grasp_missed`` (touched, never held), ``not_lifted``, ``fell`` (the object ended below
where it started), ``not_released`` (placed, still touched), the task's ``misplaced`` word (released, not placed),
``timeout`` (still carrying).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

LIFT = 0.01  # [m] above the start: lifted
FALL = 0.02  # [m] below the start: fell off the table
RESTING_SPEED = 0.02  # [m/s]: an object slower than this lies where it is
REASONS = ("collision", "not_touched", "grasp_missed", "not_lifted", "fell", "not_released", "misplaced", "timeout")


class TaskState(NamedTuple):
    """What ``evaluate`` reads of one step, (n_envs, ...) each, environment frames: the task object's position obj_pos
    (n, 3) [m], speed obj_speed (n,) [m/s] and orientation obj_quat (n, 4) wxyz; touched (a finger of some gripper on
    it), held (every finger of one gripper), held_all (every gripper holds it), released (no finger of any gripper on
    it), collided (this step, see the module docstring): (n,) bool; start_z (n,) [m]: the object's start height; place
    (n, 2) [m]: its place target; best (n,) int: the highest stage of the steps before; ever_collided (n,) bool: a
    collision at an earlier step; moved (n,) [m]: how far the object is from its start in x and y; ever_lifted (n,)
    bool: held and lifted LIFT above its start at an earlier step; others: name -> pose (n, 7) of each object the task
    watches (ObjectTask.watched): position [m], quaternion wxyz."""

    obj_pos: np.ndarray
    obj_speed: np.ndarray
    touched: np.ndarray
    held: np.ndarray
    held_all: np.ndarray
    obj_quat: np.ndarray
    released: np.ndarray
    collided: np.ndarray
    start_z: np.ndarray
    place: np.ndarray
    best: np.ndarray
    ever_collided: np.ndarray
    moved: np.ndarray
    ever_lifted: np.ndarray
    others: dict[str, np.ndarray] | None = None


class Evaluation(NamedTuple):
    """A step's judgement, (n_envs,) each: success (bool), stage (int, the task's stages), place_error_m (xy [m]),
    collided (this step), and reason: per environment why the episode has not succeeded if it ended now ('' on
    success), a word of the task's ``reasons``."""

    success: np.ndarray
    stage: np.ndarray
    place_error_m: np.ndarray
    collided: np.ndarray
    reason: list[str]




def staged(s: TaskState, placed: np.ndarray, error: np.ndarray, tol: float, misplaced: str) -> Evaluation:
    """The stages and reasons of the module docstring, given where the task counts the object placed: ``placed``
    (n,) bool and its error (n,) [m] (``tol`` [m]: the error that counts as at the place, for ``not_released``)."""
    lifted = s.held & (s.obj_pos[:, 2] > s.start_z + LIFT)
    collided = s.ever_collided | s.collided
    success = placed & (s.best >= 3) & ~collided
    stage = np.select([success, lifted, s.held, s.touched], [4, 3, 2, 1], 0)
    best = np.maximum(s.best, stage)
    reason = [_reason(e, success, collided, best, s, error <= tol, misplaced) for e in range(len(success))]
    return Evaluation(success, stage, error, s.collided, reason)


def _reason(e: int, success, collided, best, s: TaskState, at_place, misplaced: str) -> str:
    if success[e]:
        return ""
    if collided[e]:
        return "collision"
    if best[e] < 3:
        return ("not_touched", "grasp_missed", "not_lifted")[best[e]]
    if s.obj_pos[e, 2] < s.start_z[e] - FALL:
        return "fell"
    if at_place[e] and not s.released[e]:
        return "not_released"
    return misplaced if s.released[e] else "timeout"

