"""Pick-and-place: pick the object up and put it down at its place target (one arm with a gripper). The task's
YAML section and its expert's factory; the expert's phase machine is app.tasks.pick_place_expert."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.control.planner_config import PlannerConfig
from app.tasks.grasps import GraspGeometry
from app.tasks.object_task import ObjectTask
from app.tasks.pick_place_expert import PickPlaceExpert
from app.tasks.planned_pick import PlannedPickPlaceExpert
from app.tasks.registry import register_task
from app.tasks.scene_facts import SceneFacts
from app.validation import Check, CheckContext, Where

GRASP_CHOICES = ("score", "least_turn")
MAX_GRASP_LIST = 16  # grasp depths, and tilts, a pick tries (candidates: depths x tilts x yaws)


@register_task
@dataclass(frozen=True)
class PickPlaceTask(ObjectTask):
    """Pick ``object`` up and put it down at ``place_pos`` (x, y in the environment's frame [m]), or at a point
    drawn per environment from ``place_range`` ((x_lo, y_lo), (x_hi, y_hi)) at least ``min_separation`` [m]
    from where the object starts. Heights [m], speeds [m/s], accelerations [m/s^2], times [s].
    ``grasp_depths`` (fractions of the object's height below its top), ``grasp_tilts`` [rad] and
    ``grasp_yaws`` (closing directions of a round object) span the grasp candidates (app.tasks.grasps).
    ``grasp_collision``: reject a candidate whose IK solution at any of its poses brings the arm within
    ``grasp_min_distance`` [m] of the table, an obstacle or itself by the link spheres (app.collision; reason
    ``collision`` where every reachable candidate does, before the arm moves). ``grasp_choice``: "score" (the
    best-scored candidate: joint margins, manipulability) or "least_turn" (the one whose closing direction is
    nearest the gripper's: a symmetric object's equivalent grasps chosen as a continuous function of its yaw, what
    app.learn's demonstrations use; app.tasks.grasps.rank_grasps)."""

    type: ClassVar[str] = "pick_place"
    config: ClassVar[str] = "configs/pick_place.yaml"
    grasp_depths: tuple[float, ...] = (0.7, 0.5)
    grasp_tilts: tuple[float, ...] = (0.0, 0.3, -0.3)
    grasp_yaws: int = 8
    grasp_collision: bool = False
    grasp_min_distance: float = 0.005
    grasp_choice: str = "score"
    place_by_bottom: bool = False  # lower the object's bottom, as it hangs in the fingers, onto the place
    release_gap: float | None = None  # [m] the fingers' gap to let go (None: fully open; a bin's walls want less)
    planner: PlannerConfig | None = None  # plan the free-space moves (app.tasks.planned_pick)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """What each value must be (rows for app.validation.raise_first), and what the scene must hold: the
        object (a box, cylinder or sphere: the grasps come from its sizes) and a gripper."""
        objects = [o.name for o in ctx.scene.objects]
        shape = next((o.shape for o in ctx.scene.objects if o.name == self.object), "box")
        return [
            (at("object"), self.object in objects, f"{self.object!r} is not an object of the scene; objects: {objects}"),
            (at("object"), shape in ("box", "cylinder", "sphere"),
             f"{self.object!r} is a {shape}: pick_place takes its grasp geometry from a box's, cylinder's or sphere's "
             "sizes, which a file does not give"),
            (at("type"), ctx.scene.robot.gripper is not None, "pick_place needs a gripper: add robot.gripper to the scene"),
            (at("grasp_depths"), len(self.grasp_depths) > 0 and all(0 < d <= 1 for d in self.grasp_depths),
             f"fractions of the object's height in (0, 1], at least one, got {list(self.grasp_depths)}"),
            (at("grasp_tilts"), len(self.grasp_tilts) > 0 and all(abs(a) < np.pi / 2 for a in self.grasp_tilts),
             f"angles in (-pi/2, pi/2) rad, at least one, got {list(self.grasp_tilts)}"),
            (at("grasp_yaws"), 1 <= self.grasp_yaws <= 64, f"must be 1..64 closing directions, got {self.grasp_yaws}"),
            (at("grasp_depths"), len(self.grasp_depths) <= MAX_GRASP_LIST, f"at most {MAX_GRASP_LIST} depths (every "
             f"candidate is solved by IK before the arm moves), got {len(self.grasp_depths)}"),
            (at("grasp_tilts"), len(self.grasp_tilts) <= MAX_GRASP_LIST, f"at most {MAX_GRASP_LIST} tilts (every "
             f"candidate is solved by IK before the arm moves), got {len(self.grasp_tilts)}"),
            (at("grasp_choice"), self.grasp_choice in GRASP_CHOICES,
             f"must be one of {list(GRASP_CHOICES)}, got {self.grasp_choice!r}"),
            (at("grasp_min_distance"), 0 <= self.grasp_min_distance <= 0.1,
             f"must be in [0, 0.1] m (the clearance a grasp's arm poses keep), got {self.grasp_min_distance}"),
            (at("release_gap"), self.release_gap is None or self.release_gap > _widest(ctx, self.object) + 0.005,
             f"must be None (fully open) or more than 5 mm wider than {self.object!r} "
             f"({_widest(ctx, self.object):.4f} m across), got {self.release_gap}"),
        ] + (self.planner.checks(at.sub("planner"), ctx) if self.planner else []) + super().checks(at, ctx)

    def expert(self, facts: SceneFacts) -> PickPlaceExpert:
        """The scripted pick-and-place of the environments ``facts`` describes (planned where ``planner`` is set)."""

        gripper = facts.grippers[""]  # the robot's one gripper
        geometry = GraspGeometry(np.asarray(facts.half_extents, dtype=float), facts.round)
        args = (self, facts.model, gripper.ee_link, facts.base, geometry, facts.places, self.rest_heights(facts),
                gripper.max_opening, (gripper.approach_axis, gripper.closing_axis), facts.arm_dofs,
                facts.sphere_model() if self.grasp_collision else None, self.grasp_min_distance)
        if self.planner is None:
            return PickPlaceExpert(*args)
        return PlannedPickPlaceExpert(*args, mover=facts.mover(self.planner, None, (gripper.ee_link,)))


def _widest(ctx: CheckContext, name: str) -> float:
    """The widest horizontal side [m] of object ``name`` of the scene (0 where there is none)."""
    obj = next((o for o in ctx.scene.objects if o.name == name), None)
    return 0.0 if obj is None else float(max(2 * obj.half_extents()[:2]))
