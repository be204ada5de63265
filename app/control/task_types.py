"""Every run-level task type (the YAML ``task.type``), one registry for the config loader and the runner.

Motions that only depend on time (``static``, ``circle``, ``fingertips``, ``path``) live in
app.control.tasks; ``script`` (waypoint rows) in app.control.script; ``pick_place`` (a phase machine fed
with observations) in app.control.pick_place.
"""

from __future__ import annotations

from app.control.pick_place import PickPlaceTask
from app.control.script import ScriptTask
from app.control.tasks import TASK_TYPES as TIMED_TASK_TYPES

TASK_TYPES = {**TIMED_TASK_TYPES, ScriptTask.type: ScriptTask, PickPlaceTask.type: PickPlaceTask}
