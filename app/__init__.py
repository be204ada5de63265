"""Inverse kinematics and control for robot arms on PyBullet.

``app.RobotModel`` and the errors need no simulator; ``app.Scene`` (and ``app.BoxSpec``) import
PyBullet on first use.
"""

from app.kernel_cache import configure as _configure_kernel_cache

_configure_kernel_cache()  # before any kernel module is imported: numba's cache keyed on the source

from app.errors import (AppError, ConfigError, InputError, MeshNotFoundError, NotApplicableError,
                        UnknownNameError, URDFError)  # noqa: E402
from app.ik.model import RobotModel  # noqa: E402

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
