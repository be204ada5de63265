"""The model-owned cache of the IK layer: prepared solvers and the tables they are made of.

``app.RobotModel`` (app.ik.robot_model) owns the dictionary (``solver_cache``); a bare KinematicModel has
none, and everything is then built afresh. Bounded: the least recently used entries go first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

CACHE_SIZE = 64  # entries kept per model (prepared solvers, restart tables, closed-form certificates)
T = TypeVar("T")


def cached(model: object, key: tuple, build: Callable[[], T]) -> T:
    """The value stored under ``key`` in the model's cache, built by ``build()`` when missing. Unhashable
    keys (an argument given as an array, say) build a value every call and store nothing."""
    cache = getattr(model, "solver_cache", None)
    if cache is None:
        return build()
    try:
        value = cache.pop(key, None)
    except TypeError:
        return build()
    if value is None:
        value = build()
    cache[key] = value
    if len(cache) > CACHE_SIZE:
        del cache[next(iter(cache))]
    return value
