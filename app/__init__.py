"""Inverse kinematics and control for robot arms on PyBullet."""

from app.errors import AppError, ConfigError, InputError, MeshNotFoundError, SolverError, UnknownNameError, URDFError
from app.kinematics.model import RobotModel

__all__ = [
    "AppError",
    "ConfigError",
    "InputError",
    "MeshNotFoundError",
    "RobotModel",
    "SolverError",
    "URDFError",
    "UnknownNameError",
]
