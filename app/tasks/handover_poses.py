"""Where the two arms' end effectors go in a hand-over (app.tasks.handover), in the environment frame: the
giver's grasp from above, the giver level at the meeting point, the taker level at the object's far end, the
taker pointing down over the place point. Every function takes environments ``envs`` and gives positions
(k, 3) [m] and rotations (k, 3, 3)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.kinematics.rotations import axis_vector

UP = np.array([0.0, 0.0, 1.0])


def frame(approach: np.ndarray, closing: np.ndarray, axes: tuple[str, str]) -> np.ndarray:
    """End-effector rotations (k, 3, 3) whose ``axes`` (approach, closing) point along approach, closing (k, 3)."""
    a, c = axis_vector(axes[0]), axis_vector(axes[1])
    M_ee = np.stack([a, c, np.cross(a, c)], axis=1)
    M_world = np.stack([approach, closing, np.cross(approach, closing)], axis=2)
    return M_world @ M_ee.T


def level_closing(obj_quat: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The horizontal face normal of each object (k, 4 wxyz) closest to z x u (k, 3): its closing direction."""
    w, x, y, z = obj_quat.T
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    side = np.cross([0.0, 0.0, 1.0], u)
    k = np.round((np.arctan2(side[:, 1], side[:, 0]) - yaw) / (np.pi / 2))
    a = yaw + k * np.pi / 2
    return np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1)


class HandoverPoses(NamedTuple):
    """u (n_envs, 3): horizontal unit vectors from the meeting point towards the giver; C (n_envs, 3): the giver's
    closing direction (a face normal of the object, level); half (3,) [m]: the object's half extents; give_depth,
    take_depth [m]: each grip's end-effector point in from its end of the object; meet (3,) [m]; axes: the
    grippers' (approach_axis, closing_axis)."""

    u: np.ndarray
    C: np.ndarray
    half: np.ndarray
    give_depth: float
    take_depth: float
    meet: np.ndarray
    axes: tuple[str, str]
    up: np.ndarray

    def pick(self, obj_pos: np.ndarray, envs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The giver's grasp from above: end effector give_depth below the top, closing across C."""
        pos = obj_pos + UP * (self.half[2] - self.give_depth)
        return pos, frame(np.broadcast_to(-UP, (len(envs), 3)), self.C[envs], self.axes)

    def meet_pose(self, envs: np.ndarray, held: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The giver level at the meeting point, pointing at the taker, the object's centre (``held`` (k, 3) in
        the hand; default as planned) on ``meet``: the grasp turned a quarter about its closing direction."""
        side = np.cross(UP, self.u[envs])
        side *= np.where(np.sum(side * self.C[envs], axis=1) < 0, -1.0, 1.0)[:, None]  # C turned level: its sign
        rot = frame(-self.u[envs], side, self.axes)
        held = self.held(self.give_depth, len(envs)) if held is None else held
        return self.meet - np.einsum("kij,kj->ki", rot, held), rot

    def held(self, depth: float, k: int) -> np.ndarray:
        """Where a grasped object's centre sits in the end-effector frame as planned (k, 3): along the approach."""
        return np.outer(np.full(k, self.half[2] - depth), axis_vector(self.axes[0]))

    def take(self, obj_pos: np.ndarray, envs: np.ndarray, back: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The taker level, pointing at the giver, take_depth into the object's far end (``back`` [m] short of it),
        closing across the object's top and bottom: the giver's fingers hold the two other faces (sharing them
        would let the two grips wedge the object against each other)."""
        u = self.u[envs]
        rot = frame(u, self.up[envs, None] * UP, self.axes)
        return obj_pos - (self.half[2] - self.take_depth + back) * u, rot

    def place(self, centre: np.ndarray, envs: np.ndarray, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The taker pointing down with the object's centre at ``centre`` (k, 3): its take pose turned a quarter
        about the giver's closing direction, so that its own closing direction is level."""
        rot = frame(np.broadcast_to(-UP, (len(envs), 3)), self.up[envs, None] * self.u[envs], self.axes)
        return centre - np.einsum("kij,kj->ki", rot, held), rot
