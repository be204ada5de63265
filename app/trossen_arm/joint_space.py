"""The simulated arm's joints as the driver numbers them: six arm joints, then the gripper.

Driver joint i (0-5) is the URDF's joint_i; driver joint 6, the gripper, is the left carriage [m] (as on the
real arm, where one motor drives both carriages): the right carriage gets the same command. ``dofs_of`` maps
driver values onto the robot's DOFs and ``driver_of`` back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.kinematics.model import KinematicModel

ARM_JOINTS = tuple(f"joint_{i}" for i in range(6))
GRIPPER_DOFS = ("left_carriage_joint", "right_carriage_joint")  # the first is the driver's gripper joint
FLANGE_LINK = "link_6"
N_JOINTS = 7  # what get_num_joints answers


@dataclass(frozen=True)
class JointMap:
    """Driver joints <-> robot DOFs.

    Attributes:
        dof: The robot DOF of each driver joint. Shape (7,).
        mirror: The DOF that copies the gripper's command (the right carriage).
        n_dofs: The robot's DOF count.
    """

    dof: np.ndarray
    mirror: int
    n_dofs: int

    @classmethod
    def of(cls, model: KinematicModel) -> JointMap:
        dofs = [model.dof_index(n) for n in ARM_JOINTS + GRIPPER_DOFS[:1]]
        return cls(np.array(dofs), model.dof_index(GRIPPER_DOFS[1]), model.n_dofs)

    def dofs_of(self, values: np.ndarray) -> np.ndarray:
        """Driver values (7,) -> robot DOF values (n_dofs,), the right carriage copying the gripper."""
        out = np.zeros(self.n_dofs)
        out[self.dof] = values
        out[self.mirror] = values[6]
        return out

    def driver_of(self, dof_values: np.ndarray) -> np.ndarray:
        """Robot DOF values (n_dofs,) -> driver values (7,)."""
        return np.asarray(dof_values)[self.dof]
