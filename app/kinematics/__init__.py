"""Pure-numpy kinematics: rotations, ROS descriptions, URDF parsing, the batched KinematicModel."""

from app.kinematics.model import KinematicModel

__all__ = ["KinematicModel"]
