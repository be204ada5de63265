"""A robot base's pose in its environment's frame, and the frame changes it implies (pure numpy).

The scene robot (app.sim.robot) and the controllers (app.control) move environment-frame targets
into the model's base frame with it, and the model's answers back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.kinematics.rotations import matrix_to_quat, quat_to_matrix
from app.validation import as_quaternions, as_vectors


@dataclass(frozen=True)
class BaseFrame:
    """The robot base's pose in every environment's frame: rotation R (3, 3), origin p (3,) [m]."""

    R: np.ndarray
    p: np.ndarray

    @classmethod
    def from_pose(cls, pos, quat) -> BaseFrame:
        """The frame of a base at ``pos`` (3,) [m], ``quat`` (4,) wxyz (normalised here); InputError naming
        base_pos or base_quat when either is not finite, of the wrong size, or a zero quaternion."""
        return cls(quat_to_matrix(as_quaternions(quat, "base_quat")), as_vectors(pos, "base_pos", 3).reshape(3))

    @property
    def quat(self) -> np.ndarray:
        """The base's orientation (4,) wxyz, from R."""
        return matrix_to_quat(self.R)

    def targets_to_base(self, pos: np.ndarray | None, quat: np.ndarray | None) -> tuple:
        """Environment-frame targets pos (n, 3), quat (n, 4) wxyz (either None) -> the model's base frame."""
        pos_b = None if pos is None else (pos - self.p) @ self.R
        quat_b = None if quat is None else matrix_to_quat(self.R.T @ quat_to_matrix(quat))
        return pos_b, quat_b

    def poses_from_base(self, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Base-frame poses pos (..., 3), quat (..., 4) -> the environment's frame."""
        return pos @ self.R.T + self.p, matrix_to_quat(self.R @ quat_to_matrix(quat))

    def twists_to_base(self, twist: np.ndarray) -> np.ndarray:
        """Environment-frame twists (n, 6), linear then angular -> the base frame."""
        return np.concatenate([twist[:, :3] @ self.R, twist[:, 3:] @ self.R], axis=1)

    def rotations_to_base(self, rot: np.ndarray) -> np.ndarray:
        """Environment-frame rotation matrices (n, 3, 3) -> the base frame."""
        return np.matmul(self.R.T, rot)

    def jacobian_from_base(self, J: np.ndarray) -> np.ndarray:
        """A base-frame Jacobian (..., 6, n) with its rows rotated into the environment's frame."""
        return np.concatenate([self.R @ J[..., :3, :], self.R @ J[..., 3:, :]], axis=-2)
