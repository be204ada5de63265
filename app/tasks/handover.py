"""Hand-over: one arm picks the object, hands it to the other, which puts it down at the place target (two arms
with grippers). The task's YAML section and its expert's factory; the expert's phase machine is
app.tasks.handover_expert."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.control.motions import arm_link
from app.control.planner_config import PlannerConfig
from app.tasks.handover_expert import HandoverExpert
from app.tasks.object_task import ObjectTask
from app.tasks.planned_handover import PlannedHandoverExpert
from app.tasks.registry import register_task
from app.tasks.scene_facts import SceneFacts
from app.validation import Check, CheckContext, Where


@register_task
@dataclass(frozen=True)
class HandoverTask(ObjectTask):
    """Hand ``object`` from arm ``giver`` to arm ``taker`` at ``meet`` (x, y, z [m]) and put it down at ``place_pos``
    (x, y) or a point drawn per environment from ``place_range``. Depths, heights [m], speeds [m/s],
    accelerations [m/s^2], angular speeds [rad/s], times [s]; tolerances as pick_place's."""

    type: ClassVar[str] = "handover"
    robots: ClassVar[str] = "two arms with grippers (the Stationary AI)"
    config: ClassVar[str] = "configs/handover.yaml"
    n_arms: ClassVar[int] = 2
    giver: str = "left"
    taker: str = "right"
    meet: tuple[float, float, float] = (0.0, 0.0, 0.25)
    place_pos: tuple[float, float] = (0.0, -0.25)
    min_separation: float = 0.0
    give_depth: float = 0.02
    take_depth: float = 0.02
    approach_height: float = 0.06
    lift_height: float = 0.08
    planner: PlannerConfig | None = None  # plan the free-space moves (app.tasks.planned_handover)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """What each value must be (rows for app.validation.raise_first), and what the scene must hold: two
        different arms, each with a gripper, and a box to hand over."""
        s = ctx.scene
        arms = sorted((s.robot.arms or {}))
        grippers = sorted([r.name for r in s.robots if r.gripper is not None] + [g.arm for g in s.robot.grippers])
        objects = {o.name: o for o in s.objects}
        obj = objects.get(self.object)
        depth_ok = obj is not None and all(0 < d < obj.size[2] for d in (self.give_depth, self.take_depth))
        return [
            (at("object"), obj is not None, f"{self.object!r} is not an object of the scene; objects: {sorted(objects)}"),
            (at("object"), obj is None or obj.shape == "box", f"{self.object!r}: a hand-over takes its grips from a "
                                                              f"box's faces, got a {obj.shape if obj else ''}"),
            (at("giver"), self.giver in arms and self.giver != self.taker,
             f"{self.giver!r} must be one of the arms {arms} (scene robots:), other than the taker {self.taker!r}"),
            (at("taker"), self.taker in arms, f"{self.taker!r} must be one of the arms {arms} (scene robots:)"),
            (at("type"), {self.giver, self.taker} <= set(grippers),
             f"both arms need a gripper (robots[].gripper); arms with one: {grippers}"),
            (at("give_depth"), depth_ok, "give_depth and take_depth must be in (0, the object's height) m, got "
                                         f"{self.give_depth}, {self.take_depth}"),
        ] + (self.planner.checks(at.sub("planner"), ctx) if self.planner else []) + super().checks(at, ctx)

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        """The giver's and the taker's end effectors (see PoseMotion.moved_links)."""
        return [(("task", key), arm_link(getattr(self, key), robot, f"task.{key}")) for key in ("giver", "taker")]

    def expert(self, facts: SceneFacts) -> HandoverExpert:
        """The scripted hand-over of the environments ``facts`` describes (planned where ``planner`` is set)."""

        giver, taker = facts.grippers[self.giver], facts.grippers[self.taker]
        links = [giver.ee_link, taker.ee_link]
        args = (self, facts.half_extents, facts.places, self.rest_heights(facts),
                np.array([giver.max_opening, taker.max_opening]), (giver.approach_axis, giver.closing_axis),
                facts.reach(links))
        if self.planner is None:
            return HandoverExpert(*args)
        return PlannedHandoverExpert(*args, mover=facts.mover(self.planner, (self.giver, self.taker), tuple(links)))
