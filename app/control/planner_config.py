"""The ``planner:`` section of a run's task (a ``plan`` motion, a pick-and-place's free-space moves): which OMPL
planner, its budget, the clearance it keeps, and how the planned joint path is timed. The planning itself lives
in app.planning, which the episode calls (app.episode.planned_moves); the control layer only holds these settings
and follows the timed paths it is handed (app.control.tracks)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.validation import Check, CheckContext, Where, seed_problem

# app.planning.PLANNERS' names (control does not import planning; tests/test_plan_runs.py holds them equal)
PLANNER_NAMES = ("RRTConnect", "RRT", "RRTstar", "InformedRRTstar", "BITstar", "AORRTC", "PRMstar")
MOVES = ("pre_grasp", "carry", "retreat", "to_meet")  # free-space moves a planner may take (to_meet: a hand-over's)
SPAN = 2 * math.pi  # [rad]: the widest joint range a timed move may cross
MAX_MOVE_S = 120.0  # [s]: the longest rest-to-rest move across SPAN the timing bounds may ask for (1e-9 rad/s^2
# passed the check, then app.run planned for minutes and grew to 2.85 GB)
MIN_VELOCITY_SCALE = 0.01


@dataclass(frozen=True)
class PlannerConfig:
    """How a move is planned and timed.

    Attributes:
        planner: OMPL planner (PLANNER_NAMES). RRT-Connect stops at its first path: with the seed below a run
            is the same in every process; the optimizing ones use the whole ``timeout`` and are not repeatable.
        timeout: [s] budget of one search (a search that finds nothing fails with ``plan_timeout``).
        resolution: [rad] largest per-DOF step between the configurations checked on an edge.
        min_distance: [m] clearance from the table, the boxes and a held object, by the link spheres (keep it
            above the QP controller's d_safe, or the controller's rows push the arm off the path).
        shortcut_attempts: random shortcuts tried on the found path.
        searches: searches per move, each with its own seed, the shortest shortcut path kept (RRT-Connect's
            first paths differ much in length; several searches stay deterministic where one longer optimizing
            search, bounded by the clock, would not).
        max_goals: IK goals (closed-form branches) offered for a pose goal, nearest to the start first.
        velocity_scale: fraction of the URDF's joint velocity limits the timed path keeps.
        acceleration: [rad/s^2] and jerk [rad/s^3]: the timing's bounds (Ruckig, rest to rest per edge).
        moves: which moves are planned (MOVES; a pick-and-place's pre_grasp, carry, retreat; a hand-over's
            pre_grasp (both arms together), to_meet (the giver), carry (the taker)); the others stay straight.
        seed: added to the run's seed and the environment's index for each search.
    """

    planner: str = "RRTConnect"
    timeout: float = 1.0
    resolution: float = 0.05
    min_distance: float = 0.02
    shortcut_attempts: int = 200
    searches: int = 4
    max_goals: int = 4
    velocity_scale: float = 0.35
    acceleration: float = 4.0
    jerk: float = 40.0
    moves: tuple[str, ...] = ("pre_grasp", "carry")
    seed: int = 0

    def checks(self, at: Where, ctx: CheckContext | None = None) -> list[Check]:
        """Rows for app.validation.raise_first: a known planner and move, positive budgets and bounds."""
        positive = ("timeout", "resolution", "acceleration", "jerk")
        return [
            (at("planner"), self.planner in PLANNER_NAMES,
             f"unknown planner {self.planner!r}; planners: {list(PLANNER_NAMES)}"),
            (at("min_distance"), 0 <= self.min_distance <= 0.2, f"must be in [0, 0.2] m, got {self.min_distance}"),
            (at("shortcut_attempts"), 0 <= self.shortcut_attempts <= 10000,
             f"must be 0..10000, got {self.shortcut_attempts}"),
            (at("searches"), 1 <= self.searches <= 64, f"must be 1..64, got {self.searches}"),
            (at("max_goals"), 1 <= self.max_goals <= 64, f"must be 1..64, got {self.max_goals}"),
            (at("velocity_scale"), 0 < self.velocity_scale <= 1, f"must be in (0, 1], got {self.velocity_scale}"),
            (at("moves"), all(m in MOVES for m in self.moves) and len(set(self.moves)) == len(self.moves),
             f"distinct moves of {list(MOVES)}, got {list(self.moves)}"),
            (at("timeout"), self.timeout <= 60, f"must be at most 60 s, got {self.timeout}"),
            (at("seed"), seed_problem(self.seed) is None, seed_problem(self.seed) or ""),
        ] + [(at(name), getattr(self, name) > 0, f"must be > 0, got {getattr(self, name)}") for name in positive] + [
            (at("acceleration"), not self.acceleration > 0 or 2 * math.sqrt(SPAN / self.acceleration) <= MAX_MOVE_S,
             f"{self.acceleration:g} rad/s^2 would take a move across a joint's range (2 pi rad) longer than "
             f"{MAX_MOVE_S:g} s: give at least {4 * SPAN / MAX_MOVE_S ** 2:.2g}"),
            (at("jerk"), not self.jerk > 0 or (32 * SPAN / self.jerk) ** (1 / 3) <= MAX_MOVE_S,
             f"{self.jerk:g} rad/s^3 would take a move across a joint's range (2 pi rad) longer than {MAX_MOVE_S:g} "
             f"s: give at least {32 * SPAN / MAX_MOVE_S ** 3:.2g}"),
            (at("velocity_scale"), self.velocity_scale >= MIN_VELOCITY_SCALE,
             f"must be at least {MIN_VELOCITY_SCALE} (slower moves last for ever), got {self.velocity_scale}")]
