"""Every run-level task type (the YAML ``task.type``), one registry for the config loader and the runner.

Motions that only depend on time (``static``, ``circle``, ``fingertips``, ``path``) live in
app.control.motions; ``script`` (waypoint rows) in app.control.script; ``pick_place`` (a phase machine fed
with observations) in app.control.pick_place; ``plan`` (planned moves through goals) in app.control.plan_motion.
"""

from __future__ import annotations

from app.control.handover import HandoverMotion
from app.control.motions import MOTION_TYPES as TIMED_MOTION_TYPES
from app.control.pick_place import PickPlaceMotion
from app.control.plan_motion import PlanMotion
from app.control.script import ScriptMotion

MOTION_TYPES = {**TIMED_MOTION_TYPES, ScriptMotion.type: ScriptMotion, PickPlaceMotion.type: PickPlaceMotion,
                HandoverMotion.type: HandoverMotion, PlanMotion.type: PlanMotion}
