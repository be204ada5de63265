"""Place in a bin: pick the object up and put it down inside a bin, an open box of four walls on the table (one
arm with a gripper). The bin is the task's fixture (its walls join the scene's obstacles: an arm link touching one
is a collision); the expert is pick-and-place's, carrying the object over the walls (``lift_height`` above the
rim) and lowering it onto the bin's floor at its centre. Success: the object's centre rests inside the walls, below
their top, released; otherwise ``outside_bin``, the other reasons as pick-and-place's (app.tasks.outcome)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.specs.box_spec import BoxSpec
from app.tasks.object_task import nearest
from app.tasks.outcome import REASONS, RESTING_SPEED, TaskState
from app.tasks.pick_place import PickPlaceTask
from app.tasks.registry import register_task
from app.validation import Check, CheckContext, Where

WALL_RGBA = (0.3, 0.55, 0.35, 1.0)


@register_task
@dataclass(frozen=True)
class PlaceInBinTask(PickPlaceTask):
    """Put ``object`` into the bin centred at ``bin_pos`` (x, y [m], environment frame) whose floor (the table's
    top) is ``bin_inner`` (x, y [m]) inside walls ``wall_height`` [m] high and ``wall_thickness`` [m] thick;
    pick-and-place's grasp and motion settings (``lift_height``: how far above the rim the object is carried)."""

    type: ClassVar[str] = "place_in_bin"
    config: ClassVar[str] = "configs/tasks/place_in_bin.yaml"
    env_id: ClassVar[str] = "app/WidowXAIPlaceInBin-v0"
    misplaced: ClassVar[str] = "outside_bin"
    reasons: ClassVar[tuple[str, ...]] = tuple(r if r != "misplaced" else "outside_bin" for r in REASONS)
    bin_pos: tuple[float, float] = (0.35, 0.14)
    bin_inner: tuple[float, float] = (0.12, 0.12)
    wall_height: float = 0.04
    wall_thickness: float = 0.01
    floor_z: float = 0.0  # [m] the table's top, where the walls stand
    lift_height: float = 0.06
    min_separation: float = 0.02
    grasp_tilts: tuple[float, ...] = (0.0,)  # upright: a tilted gripper's opening fingers reach a wall
    release_gap: float | None = 0.07  # [m] the fully open fingers (9 cm) touch a 12 cm bin's walls

    def places(self, starts: dict, seed: int) -> np.ndarray:
        """The bin's centre (k, 2) [m]."""
        return np.tile(np.asarray(self.bin_pos, dtype=float), (len(starts[self.object][0]), 1))

    def fixtures(self) -> tuple[BoxSpec, ...]:
        """The four walls, named bin_wall_{x-,x+,y-,y+}."""
        (x, y), (lx, ly), t, h = self.bin_pos, self.bin_inner, self.wall_thickness, self.wall_height
        z = self.floor_z + h / 2
        return (BoxSpec("bin_wall_x-", (t, ly + 2 * t, h), (x - (lx + t) / 2, y, z), rgba=WALL_RGBA),
                BoxSpec("bin_wall_x+", (t, ly + 2 * t, h), (x + (lx + t) / 2, y, z), rgba=WALL_RGBA),
                BoxSpec("bin_wall_y-", (lx, t, h), (x, y - (ly + t) / 2, z), rgba=WALL_RGBA),
                BoxSpec("bin_wall_y+", (lx, t, h), (x, y + (ly + t) / 2, z), rgba=WALL_RGBA))

    def placed(self, state: TaskState) -> tuple[np.ndarray, np.ndarray]:
        """Inside the walls (its centre within the floor's rectangle, below the rim), resting and released; the
        error is the xy distance from the bin's centre [m]."""
        rel = state.obj_pos[:, :2] - np.asarray(self.bin_pos)
        inside = np.all(np.abs(rel) < np.asarray(self.bin_inner) / 2, axis=1)
        below = state.obj_pos[:, 2] < self.floor_z + self.wall_height
        error = np.linalg.norm(rel, axis=1)
        return inside & below & (state.obj_speed < RESTING_SPEED) & state.released, error

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Pick-and-place's, and: positive bin sizes, the object fits the floor and starts outside the walls,
        carried above the rim."""
        obj = next((o for o in ctx.scene.objects if o.name == self.object), None)
        outer = np.asarray(self.bin_inner) / 2 + self.wall_thickness
        foot = np.array([np.asarray(self.bin_pos) - outer, np.asarray(self.bin_pos) + outer])
        start = None if obj is None else obj.start_range()[:, :2]
        gap = None if start is None else nearest(start, foot)
        fits = obj is None or max(obj.size[:2]) < min(self.bin_inner)
        return super().checks(at, ctx) + [
            (at("bin_inner"), min(self.bin_inner) > 0, f"must be > 0 m each, got {list(self.bin_inner)}"),
            (at("bin_inner"), fits, f"{self.object!r} ({None if obj is None else list(obj.size)}) does not fit a "
                                    f"floor of {list(self.bin_inner)} m"),
            (at("wall_height"), self.wall_height > 0, f"must be > 0 m, got {self.wall_height}"),
            (at("wall_thickness"), self.wall_thickness > 0, f"must be > 0 m, got {self.wall_thickness}"),
            (at("lift_height"), self.lift_height > self.wall_height,
             f"{self.lift_height} m: must be above the walls' {self.wall_height} m (the object is carried over them)"),
            (at("bin_pos"), gap is None or gap >= self.min_separation,
             f"the bin's walls come within {gap if gap is None else round(gap, 4)} m of where {self.object!r} may "
             f"start (under min_separation {self.min_separation} m): move the bin or the object's pos_range"),
        ]
