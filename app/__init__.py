"""Inverse kinematics and control for robot arms on PyBullet.

``app.RobotModel`` and the errors need no simulator; ``app.Scene`` (and ``app.BoxSpec``) import
PyBullet on first use.
"""

from app.errors import (AppError, ConfigError, InputError, MeshNotFoundError, NotApplicableError,
                        UnknownNameError, URDFError)
from app.ik.model import RobotModel

__all__ = [
    "AppError",
    "BoxSpec",
    "ConfigError",
    "InputError",
    "MeshNotFoundError",
    "NotApplicableError",
    "RobotModel",
    "Scene",
    "URDFError",
    "UnknownNameError",
]


def __getattr__(name: str):
    if name in ("Scene", "BoxSpec"):
        from app.sim import scene

        return getattr(scene, name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")
