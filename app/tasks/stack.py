"""Stack: pick a cube up and put it down on another (one arm with a gripper). The place target is the base
object's start; the expert is pick-and-place's with its place raised onto the base's top. Success: the object
rests released on the base, its centre within ``success_tol`` of the base's centre in x and y (where the base is
now) and above the base's top; otherwise ``not_stacked`` where it was released elsewhere (beside the base, or the
base knocked over), the other reasons as pick-and-place's (app.tasks.outcome)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.tasks.object_task import nearest
from app.tasks.outcome import LIFT, REASONS, RESTING_SPEED, TaskState
from app.tasks.pick_place import PickPlaceTask
from app.tasks.registry import register_task
from app.validation import Check, CheckContext, Where


@register_task
@dataclass(frozen=True)
class StackTask(PickPlaceTask):
    """Put ``object`` on ``base`` (two boxes of the scene whose start ranges lie at least ``min_separation`` [m]
    apart in x and y); pick-and-place's grasp and motion settings."""

    type: ClassVar[str] = "stack"
    config: ClassVar[str] = "configs/tasks/stack.yaml"
    env_id: ClassVar[str] = "app/WidowXAIStack-v0"
    misplaced: ClassVar[str] = "not_stacked"
    reasons: ClassVar[tuple[str, ...]] = tuple(r if r != "misplaced" else "not_stacked" for r in REASONS)
    object: str = "cube"
    base: str = "base_cube"
    min_separation: float = 0.06
    grasp_depths: tuple[float, ...] = (0.5,)
    lift_height: float = 0.06

    def places(self, starts: dict, seed: int) -> np.ndarray:
        """The base's start, in x and y (k, 2) [m]."""
        return starts[self.base][0][:, :2].copy()

    def rest_heights(self, facts) -> np.ndarray:
        """On the base's top: its start height plus both half heights (k,) [m]."""
        return facts.starts[self.base][0][:, 2] + facts.halves[self.base][2] + facts.halves[self.object][2]

    def watched(self) -> tuple[str, ...]:
        return (self.base,)

    def placed(self, state: TaskState) -> tuple[np.ndarray, np.ndarray]:
        """On the base where it is now: centred within success_tol in x and y, above its centre by more than LIFT,
        resting and released."""
        base = state.others[self.base][:, :3]
        error = np.linalg.norm(state.obj_pos[:, :2] - base[:, :2], axis=1)
        above = state.obj_pos[:, 2] > base[:, 2] + LIFT
        return (error <= self.success_tol) & above & (state.obj_speed < RESTING_SPEED) & state.released, error

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Pick-and-place's, and: the base is another box of the scene whose starts keep min_separation from the
        object's."""
        objects = {o.name: o for o in ctx.scene.objects}
        base, obj = objects.get(self.base), objects.get(self.object)
        gap = None if base is None or obj is None else nearest(obj.start_range()[:, :2], base.start_range()[:, :2])
        return super().checks(at, ctx) + [
            (at("base"), base is not None and self.base != self.object,
             f"{self.base!r} must be another object of the scene than {self.object!r}; objects: {sorted(objects)}"),
            (at("base"), base is None or base.shape == "box", f"{self.base!r} must be a box (its top is the place)"),
            (at("min_separation"), gap is None or gap >= self.min_separation,
             f"the starts of {self.object!r} and {self.base!r} come {gap if gap is None else round(gap, 4)} m close "
             f"in x and y, under {self.min_separation} m: give them pos_range boxes that far apart"),
        ]

