"""Every YAML task type (the run file's ``task.type``): one registry for the config loader, the runner and
``app.eval --list-tasks``.

Motions that only depend on time (``static``, ``circle``, ``fingertips``, ``path``, ``arms``) live in
app.control.motions, ``script`` (waypoint rows) in app.control.script, ``plan`` (planned moves through goals) in
app.control.plan_motion. A manipulation task (an object, a scripted expert, a success judged by ``evaluate``) is
one module of app.tasks whose class carries ``@register_task``; app.tasks imports every module of its folder, so a
new task is one new file. A task outside the package is named in YAML as ``module.path:ClassName`` and registers
itself when the loader imports it (:func:`task_type`).
"""

from __future__ import annotations

import importlib

from app.control.motions import MOTION_TYPES as TIMED_MOTION_TYPES
from app.control.plan_motion import PlanMotion
from app.control.script import ScriptMotion
from app.errors import InputError

TASK_TYPES: dict[str, type] = {**TIMED_MOTION_TYPES, ScriptMotion.type: ScriptMotion, PlanMotion.type: PlanMotion}
MANIPULATION: dict[str, type] = {}  # the registered manipulation tasks, type -> class, in registration order


def register_task(cls: type) -> type:
    """Class decorator: ``cls`` (a frozen dataclass with a ``type`` ClassVar, an ``expert`` and an ``evaluate``) is
    the YAML task ``cls.type``. A second class under a taken name is an error (a typo would replace a task)."""
    name, old = cls.type, TASK_TYPES.get(cls.type)
    if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
        raise InputError(f"task type {name!r} is taken by {old.__module__}.{old.__name__}; "
                         f"{cls.__module__}.{cls.__name__} needs another name")
    TASK_TYPES[name] = MANIPULATION[name] = cls
    return cls


def task_type(name: str) -> type | None:
    """The class of YAML task type ``name``: a registered one, or ``module.path:ClassName`` (the module is
    imported, which registers the task); None where there is none of that name."""
    if name in TASK_TYPES:
        return TASK_TYPES[name]
    if ":" not in name:
        return None
    module, _, attr = name.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise InputError(f"task type {name!r}: cannot import {attr!r} from {module!r} ({e})") from None
    if getattr(cls, "type", None) not in MANIPULATION:
        raise InputError(f"task type {name!r}: {module}.{attr} is not a registered task (decorate it with "
                         "app.tasks.register_task)")
    return cls
