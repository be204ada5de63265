"""Inverse kinematics and control for robot arms on PyBullet.

``app.RobotModel`` and the errors need no simulator; ``app.Scene`` (and ``app.BoxSpec``) import
PyBullet on first use.
"""

import logging as _logging
import os as _os
import sys as _sys

if _sys.argv[:1] == ["-m"]:  # a command line (python -m app.X) still importing: a signal ends it in one line
    from app.runtime.command import catch_signals_while_importing as _catch
    from app.runtime.render_server import start_early as _start_render_server

    _catch()
    _start_render_server(_sys.orig_argv)  # app.run's video: its render processes' server loads meanwhile

from app.kernels.cache import compile_pending as _compile_pending
from app.kernels.cache import configure as _configure_kernel_cache

_configure_kernel_cache()  # before any kernel module is imported: numba's cache keyed on the source
if _compile_pending() and not _os.environ.get("APP_COMPILE_NOTICE"):  # once per process tree (workers inherit it)
    _os.environ["APP_COMPILE_NOTICE"] = "shown"
    _logging.getLogger("app").warning("compiling the numba kernels for this version of the code: the first calls "
                                      "take ~30 s once, then they are cached")

from app.errors import (AppError, ConfigError, InputError, MeshNotFoundError, NotApplicableError, UnknownNameError,
                        URDFError)  # noqa: E402
from app.ik.robot_model import RobotModel  # noqa: E402

__all__ = [
    "AppError",
    "BoxSpec",
    "ConfigError",
    "InputError",
    "make_env",
    "make_vec_env",
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
    if name in ("make_env", "make_vec_env"):  # Gymnasium environments (app.envs): gymnasium imported on first use
        import app.envs as envs

        return getattr(envs, name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")
