"""Manipulation tasks, one module each: the task's YAML section (a frozen dataclass registered by
``@register_task``), its seeded draws, its scripted expert and its ``evaluate``. Importing the package imports
every module in this folder, so each task registers itself (app.tasks.registry)."""

from __future__ import annotations

import importlib
import pkgutil

from app.tasks.judge import TaskJudge, judged
from app.tasks.object_task import ObjectTask, object_task
from app.tasks.outcome import Evaluation, TaskState
from app.tasks.registry import MANIPULATION, TASK_TYPES, register_task, task_type

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["MANIPULATION", "TASK_TYPES", "Evaluation", "ObjectTask", "TaskJudge", "TaskState", "judged", "object_task",
           "register_task", "task_type"]
