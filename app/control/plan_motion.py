"""The ``plan`` task: from a start configuration through goals given as joints or end-effector poses (with
masks), every move planned collision-free (app.planning, called by app.episode.plan_task) and followed by the
run's controller as a timed end-effector track.

The planning happens before the episode, per environment, from the start (the scene's init_qpos) through each
goal in turn (a move
starts where the one before ended); an environment whose move cannot be planned holds where it is, and its
reason (app.control.phases.PLAN_REASONS) goes to the report, the summary and the video's caption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from app.control.motion_protocol import MotionBase, Targets
from app.control.phases import WORDS
from app.control.planner_config import PlannerConfig
from app.control.tracks import Track, polylines
from app.kinematics.rotations import matrix_to_quat
from app.validation import Check, CheckContext, Where


@dataclass(frozen=True)
class PlanGoal:
    """One goal: ``joints`` (the robot's DOFs, or its revolute ones) [rad, m], or an end-effector pose ``pos``
    (3,) [m] and ``quat`` (w, x, y, z) in the environment's frame with ``pos_mask`` / ``rot_mask`` (Genesis's
    meaning: which position axes and which link axes must match)."""

    joints: tuple[float, ...] | None = None
    pos: tuple[float, float, float] | None = None
    quat: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 0.0)
    pos_mask: tuple[bool, bool, bool] = (True, True, True)
    rot_mask: tuple[bool, bool, bool] = (True, True, True)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Joints or a pose (not both); joints as many as the robot's DOFs or revolute ones; a nonzero quat."""
        model = ctx.model
        sizes = None if model is None else (model.n_dofs, int(np.count_nonzero(model.revolute)))
        return [
            (at(), (self.joints is None) != (self.pos is None), "give joints or pos (an end-effector pose), one of them"),
            (at("joints"), self.joints is None or sizes is None or len(self.joints) in sizes,
             f"needs {sizes and ' or '.join(map(str, sizes))} values, got {self.joints and len(self.joints)}"),
            (at("quat"), any(self.quat), "must be a nonzero (w, x, y, z) quaternion"),
            (at("pos_mask"), any(self.pos_mask) or any(self.rot_mask), "a pose goal needs some axis to match"),
        ]


@dataclass(frozen=True)
class PlanMotion:
    """Plan from the start (the scene's ``robot.init_qpos``: a run sets it by ``scene_overrides: {robot:
    {init_qpos: [...]}}``) through ``goals`` in order, resting ``dwell`` [s] at each; ``planner``: how each move is
    planned and timed. The end effector follows the planned path's full pose (every axis of the targets)."""

    type: ClassVar[str] = "plan"
    pos_mask: ClassVar[tuple[bool, bool, bool]] = (True, True, True)
    rot_mask: ClassVar[tuple[bool, bool, bool]] = (True, True, True)
    goals: tuple[PlanGoal, ...] = ()
    dwell: float = 0.5
    planner: PlannerConfig = field(default_factory=PlannerConfig)

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        """(key path, link) of what this motion moves: the robot's end effector (see
        app.control.motions.PoseMotion.moved_links)."""
        return [(("robot", "ee_link"), robot.ee_link)]

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """At least one goal, each checked; a one-arm robot; the planner's settings."""
        rows = [
            (at("goals"), len(self.goals) > 0, "needs at least one goal (joints: [...] or pos: [...])"),
            (at("dwell"), 0 <= self.dwell <= 60, f"must be in [0, 60] s, got {self.dwell}"),
            (at("type"), not ctx.scene.robot.arms,
             f"plans one arm: the scene's robot has named arms {sorted(ctx.scene.robot.arms or {})}"),
        ]
        for i, goal in enumerate(self.goals):
            rows += goal.checks(at.sub("goals", i), ctx)
        return rows + self.planner.checks(at.sub("planner"), ctx)


class PlannedPath(MotionBase):
    """The plan task's target source: one end-effector :class:`Track` per environment (every move and dwell
    joined), and per environment its moves' stats and the reason a move failed ('' where none did).

    Args:
        tracks: per environment its whole track (a failed environment's ends where it holds).
        moves: per environment the stats of each planned move (app.tasks.planned_pick.PlannedMove.stats).
        reasons: per environment '' or the failed move's reason.
    """

    n_targets = 1

    def __init__(self, tracks: list[Track], moves: list[list[dict]], reasons: list[str]):
        self.tracks, self.moves, self.reasons = tracks, moves, reasons
        self._t = 0.0
        self.paths = polylines(tracks)  # every move's path, drawn for the whole run

    def __call__(self, t: float) -> Targets:
        self._t = float(t)
        poses = [track.at(t) for track in self.tracks]
        pos = np.stack([p for p, _, _ in poses])[:, None]
        quat = matrix_to_quat(np.stack([r for _, r, _ in poses]))[:, None]
        return Targets(pos, quat, np.stack([v for _, _, v in poses])[:, None])

    def codes(self) -> np.ndarray:
        """Per environment: its failure's word, else ``moving`` until its track ends, then ``arrived``."""
        words = [r if r else ("moving" if self._t < track.duration else "arrived")
                 for r, track in zip(self.reasons, self.tracks)]
        return np.array([WORDS.index(w) for w in words], dtype=np.int8)

    def outcomes(self) -> list[dict]:
        """Per environment the plan's result for the report: success, reason, its moves' stats."""
        return [{"success": not r, "reason": r, "moves": m, "duration_s": round(track.duration, 4)}
                for r, m, track in zip(self.reasons, self.moves, self.tracks)]
