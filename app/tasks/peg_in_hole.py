"""Peg in hole: pick an upright round peg up and insert it into a square hole through a block on the table (one
arm with a gripper). The block is the task's fixture (four boxes around the hole; an arm link touching one is a
collision); the hole is ``clearance`` [m] wider than the peg. The expert is pick-and-place's: it carries the peg
above the block (``lift_height`` over the block's top) and lowers it straight down the hole to the table, then lets
go. Success, by depth: the peg's bottom at least ``insert_depth`` [m] below the block's top with its centre inside
the hole, resting, released; otherwise ``jammed`` (over the block, not that deep, let go or still held) or
``misplaced`` (released elsewhere), the other reasons as pick-and-place's (app.tasks.outcome)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.specs.box_spec import BoxSpec
from app.tasks.object_task import nearest
from app.tasks.outcome import REASONS, RESTING_SPEED, Evaluation, TaskState
from app.tasks.pick_place import PickPlaceTask
from app.tasks.registry import register_task
from app.validation import Check, CheckContext, Where

BLOCK_RGBA = (0.75, 0.7, 0.35, 1.0)
MAX_CLEARANCE = 0.005  # [m]: a wider hole is no insertion


@register_task
@dataclass(frozen=True)
class PegInHoleTask(PickPlaceTask):
    """Insert ``object`` (an upright cylinder of the scene) into the hole at ``hole_pos`` (x, y [m], environment
    frame) through a square block ``block_size`` [m] wide and ``block_height`` [m] high standing on the table
    (``floor_z``); the hole's side is the peg's diameter plus ``clearance`` (at most 5 mm)."""

    type: ClassVar[str] = "peg_in_hole"
    config: ClassVar[str] = "configs/tasks/peg_in_hole.yaml"
    env_id: ClassVar[str] = "app/WidowXAIPegInHole-v0"
    reasons: ClassVar[tuple[str, ...]] = REASONS + ("jammed",)
    object: str = "peg"
    hole_pos: tuple[float, float] = (0.35, 0.12)
    clearance: float = 0.004
    block_size: float = 0.1
    block_height: float = 0.04
    floor_z: float = 0.0  # [m] the table's top, where the block stands
    insert_depth: float = 0.03
    peg_radius: float = 0.012  # [m] the peg's (the hole's side is 2 peg_radius + clearance); checked against it
    lift_height: float = 0.06
    grasp_depths: tuple[float, ...] = (0.4,)  # 1 cm above its centre: a round peg pivots in the fingers
    grasp_tilts: tuple[float, ...] = (0.0,)  # upright: the peg goes down the hole along its axis
    place_by_bottom: bool = True  # a peg tilted in the fingers still meets the hole with its bottom
    accel: float = 0.5  # [m/s^2] half pick-and-place's: a round peg swings in the fingers as the arm speeds up
    min_separation: float = 0.02

    @property
    def hole_side(self) -> float:
        """The hole's side [m]."""
        return 2 * self.peg_radius + self.clearance

    def places(self, starts: dict, seed: int) -> np.ndarray:
        """The hole's centre (k, 2) [m]."""
        return np.tile(np.asarray(self.hole_pos, dtype=float), (len(starts[self.object][0]), 1))

    def fixtures(self) -> tuple[BoxSpec, ...]:
        """The block as four boxes around the hole, named hole_block_{x-,x+,y-,y+}."""
        (x, y), s, b, h = self.hole_pos, self.hole_side, self.block_size, self.block_height
        w, z = (b - s) / 2, self.floor_z + h / 2
        return (BoxSpec("hole_block_x-", (w, b, h), (x - (s + w) / 2, y, z), rgba=BLOCK_RGBA),
                BoxSpec("hole_block_x+", (w, b, h), (x + (s + w) / 2, y, z), rgba=BLOCK_RGBA),
                BoxSpec("hole_block_y-", (s, w, h), (x, y - (s + w) / 2, z), rgba=BLOCK_RGBA),
                BoxSpec("hole_block_y+", (s, w, h), (x, y + (s + w) / 2, z), rgba=BLOCK_RGBA))

    def depth(self, state: TaskState, half_height: float) -> np.ndarray:
        """How far (n,) [m] the peg's bottom is below the block's top."""
        return self.floor_z + self.block_height - (state.obj_pos[:, 2] - half_height)

    def placed(self, state: TaskState) -> tuple[np.ndarray, np.ndarray]:
        """In the hole (centre inside its square) at least insert_depth deep, resting and released; the error is
        the xy distance from the hole's axis [m]."""
        rel = state.obj_pos[:, :2] - np.asarray(self.hole_pos)
        inside = np.all(np.abs(rel) < self.hole_side / 2, axis=1)
        half = state.start_z  # the peg starts upright on the table: its centre is half its height up
        deep = self.depth(state, half - self.floor_z) >= self.insert_depth
        return inside & deep & (state.obj_speed < RESTING_SPEED) & state.released, np.linalg.norm(rel, axis=1)

    def evaluate(self, state: TaskState) -> Evaluation:
        """Pick-and-place's stages; a peg over the block but not down the hole, let go or still held, is
        ``jammed``."""
        judged = super().evaluate(state)
        over = np.linalg.norm(state.obj_pos[:, :2] - np.asarray(self.hole_pos), axis=1) < self.block_size / 2
        stuck = ("misplaced", "not_released", "timeout")  # over the block, not down the hole: held or let go
        reason = ["jammed" if r in stuck and over[e] else r for e, r in enumerate(judged.reason)]
        return judged._replace(reason=reason)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Pick-and-place's, and: the peg an upright cylinder of peg_radius, the clearance in (0, 5 mm], a
        block wider than the hole, the peg starting off the block and carried over it."""
        obj = next((o for o in ctx.scene.objects if o.name == self.object), None)
        b = self.block_size / 2
        start = None if obj is None else obj.start_range()[:, :2]
        gap = None if start is None else nearest(start, np.array([np.subtract(self.hole_pos, b),
                                                                  np.add(self.hole_pos, b)]))
        return super().checks(at, ctx) + [
            (at("object"), obj is None or obj.shape == "cylinder", f"{self.object!r} must be a cylinder (a round peg)"),
            (at("peg_radius"), obj is None or obj.shape != "cylinder" or abs(obj.radius - self.peg_radius) < 1e-9,
             f"{self.peg_radius} m: must be {self.object!r}'s radius ({None if obj is None else obj.radius} m)"),
            (at("clearance"), 0 < self.clearance <= MAX_CLEARANCE,
             f"must be in (0, {MAX_CLEARANCE}] m (a wider hole is no insertion), got {self.clearance}"),
            (at("block_size"), self.block_size > self.hole_side + 0.01,
             f"must be at least 1 cm wider than the hole ({self.hole_side:.4f} m), got {self.block_size}"),
            (at("insert_depth"), 0 < self.insert_depth <= self.block_height,
             f"must be in (0, block_height={self.block_height}] m, got {self.insert_depth}"),
            (at("lift_height"), self.lift_height > self.block_height,
             f"{self.lift_height} m: must be above the block's {self.block_height} m (the peg is carried over it)"),
            (at("hole_pos"), gap is None or gap >= self.min_separation,
             f"the block comes within {gap if gap is None else round(gap, 4)} m of where {self.object!r} may start "
             f"(under min_separation {self.min_separation} m): move the hole or the peg's pos_range"),
        ]
