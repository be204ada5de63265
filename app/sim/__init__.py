"""The only package that imports PyBullet: loading, scenes, robots, objects, grippers, markers."""

import os as _os
import sys as _sys


def _import_pybullet_quietly() -> None:
    """Import PyBullet with its C-level 'pybullet build time: ...' line kept off stderr: every process that
    imports it (this one and each render process) printed it, above the run's own lines and before a one-line
    error. Anything PyBullet raises still raises."""
    if "pybullet" in _sys.modules:
        return
    try:
        _sys.stderr.flush()
        saved = _os.dup(2)
    except (OSError, ValueError, AttributeError):  # no usable fd 2: import as it is
        import pybullet  # noqa: F401
        return
    devnull = _os.open(_os.devnull, _os.O_WRONLY)
    try:
        _os.dup2(devnull, 2)
        import pybullet  # noqa: F401
    finally:
        _os.dup2(saved, 2)
        _os.close(saved)
        _os.close(devnull)


_import_pybullet_quietly()
