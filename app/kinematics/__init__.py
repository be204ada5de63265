"""Pure-numpy kinematics: rotations, URDF parsing, the batched RobotModel."""

from app.kinematics.model import RobotModel

__all__ = ["RobotModel"]
