"""What a controller needs of a robot, as a protocol, and a plain numpy robot that provides it.

The controllers (app.control) talk only to :class:`ControlledRobot`: read q and q-dot, command
positions (with velocity feed-forward) or set them, and distance rows on request. The PyBullet
robot (app.sim.robot.Robot) implements it; :class:`IntegratorRobot` does without any simulator, so
every controller runs and is tested on its own. Arrays always lead with the environment axis.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from app.ik.limits.distance import CollisionPairs, DistanceRows, GraspState
from app.ik.robot_model import RobotModel


class ControlledRobot(Protocol):
    """A robot of ``n_envs`` environments with ``model.n_dofs`` DOFs each."""

    model: RobotModel
    n_envs: int
    arm_dofs: np.ndarray  # the DOFs a controller commands (a gripper's fingers are not among them)

    def read_states(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities. Shapes (n_envs, n_dofs)."""

    def base_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """The base pose in every environment's frame: rotation (3, 3), origin (3,) [m]."""

    def command(self, q: np.ndarray, qdot: np.ndarray, position_gain: float | None = None) -> None:
        """Position targets q with velocity feed-forward qdot for the motors. Shapes (n_envs, n_dofs)."""

    def set_state(self, q: np.ndarray) -> None:
        """Teleport the joints to q (n_envs, n_dofs), at rest."""

    def distance_rows(self, q: np.ndarray, pairs: CollisionPairs, grasp: GraspState | None = None) -> DistanceRows:
        """The watched pairs' distance rows at q (n_envs, n_dofs), grouped by environment; ``grasp``: the contacts
        the motion means this tick (their rows dropped; None: none)."""


class IntegratorRobot:
    """An ideal robot in numpy: each :meth:`step` reaches the commanded position exactly (joint limits
    clip it), with the commanded velocity. No obstacles: distance rows are empty.

    Args:
        model: The robot's model. n_envs: Environments. q0: Start (n_dofs,) or (n_envs, n_dofs); default
            the mid-point of the limits. base_R, base_p: The base pose in the environment frame.
    """

    def __init__(self, model: RobotModel, n_envs: int = 1, q0: np.ndarray | None = None,
                 base_R: np.ndarray | None = None, base_p: np.ndarray | None = None):
        self.model, self.n_envs = model, int(n_envs)
        self.arm_dofs = np.arange(model.n_dofs)  # no gripper: every DOF
        start = model.mid_config() if q0 is None else np.asarray(q0, dtype=float)
        self.q = np.array(np.broadcast_to(start, (self.n_envs, model.n_dofs)), dtype=float)
        self.v = np.zeros_like(self.q)
        self._target = (self.q.copy(), self.v.copy())
        self._base = (np.eye(3) if base_R is None else np.asarray(base_R, dtype=float),
                      np.zeros(3) if base_p is None else np.asarray(base_p, dtype=float))

    @property
    def n_dofs(self) -> int:
        return self.model.n_dofs

    def read_states(self) -> tuple[np.ndarray, np.ndarray]:
        return self.q.copy(), self.v.copy()

    def base_frames(self) -> tuple[np.ndarray, np.ndarray]:
        return self._base

    def command(self, q: np.ndarray, qdot: np.ndarray, position_gain: float | None = None) -> None:
        del position_gain  # an ideal motor
        self._target = (np.asarray(q, dtype=float).reshape(self.q.shape), np.asarray(qdot, dtype=float).reshape(self.q.shape))

    def set_state(self, q: np.ndarray) -> None:
        self.q = self.model.clip(np.asarray(q, dtype=float).reshape(self.q.shape))
        self.v = np.zeros_like(self.q)
        self._target = (self.q.copy(), self.v.copy())

    def distance_rows(self, q: np.ndarray, pairs: CollisionPairs, grasp: GraspState | None = None) -> DistanceRows:
        del q, pairs, grasp
        return DistanceRows.empty(self.model.n_dofs)

    def step(self) -> None:
        """One control tick: the joints reach the commanded positions."""
        self.q, self.v = self.model.clip(self._target[0]), self._target[1].copy()
