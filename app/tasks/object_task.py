"""What every object task shares: the object handled, where it goes, the heights, speeds, tolerances and times its
expert moves and judges by, with their checks, and ``evaluate``: whether an episode succeeded, from the simulator's
state alone, the one judgement app.run's report, app.record's kept/failed filter and app.envs' ``is_success`` all
use. Heights [m], speeds [m/s], accelerations [m/s^2], angular speeds [rad/s], times [s].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.errors import InputError
from app.specs.box_spec import BoxSpec
from app.tasks.outcome import REASONS, RESTING_SPEED, Evaluation, TaskState, staged
from app.validation import Check, CheckContext, Where

POSITIVE = ("approach_height", "lift_height", "speed", "accel", "angular_speed", "pos_tol", "rot_tol", "phase_timeout",
            "close_time", "slip_tol", "success_tol")  # what the motions time and judge by
PLACE_DRAWS = 1000  # tries per environment for a place min_separation from its start
@dataclass(frozen=True)
class ObjectTask:
    """Move ``object`` and put it down at ``place_pos`` (x, y in the environment's frame [m]), or at a point drawn
    per environment from ``place_range`` ((x_lo, y_lo), (x_hi, y_hi)) at least ``min_separation`` [m] from where
    the object starts; a segment's goal counts as reached within ``pos_tol`` [m] / ``rot_tol`` [rad], a phase
    fails after ``phase_timeout``, the fingers close for ``close_time``, a hold slips past ``slip_tol`` and a
    placement succeeds within ``success_tol`` [m] of its target."""

    robots: ClassVar[str] = "one arm with a gripper"  # what the task needs of the scene's robot (app.eval --list-tasks)
    config: ClassVar[str] = ""  # the shipped run file of the task (configs/...)
    env_id: ClassVar[str] = ""  # its Gymnasium id, app/<Name>-v0 (app.envs.registry), on ``config``
    n_arms: ClassVar[int] = 1  # the arms the expert moves (its observations: one arm's, or every arm's by name)
    reasons: ClassVar[tuple[str, ...]] = REASONS  # the words evaluate gives a failure
    misplaced: ClassVar[str] = "misplaced"  # the reason of a released object the task does not count as placed
    pos_mask: ClassVar[tuple[bool, bool, bool]] = (True, True, True)
    rot_mask: ClassVar[tuple[bool, bool, bool]] = (True, True, True)
    object: str = "cube"
    place_pos: tuple[float, float] = (0.35, 0.15)
    place_range: tuple[tuple[float, float], tuple[float, float]] | None = None
    min_separation: float = 0.08
    approach_height: float = 0.05
    lift_height: float = 0.05
    speed: float = 0.25
    accel: float = 1.0
    angular_speed: float = 2.0
    pos_tol: float = 0.005
    rot_tol: float = 0.05
    phase_timeout: float = 3.0
    close_time: float = 0.15
    slip_tol: float = 0.01
    success_tol: float = 0.01

    def placement(self, obj_pos: np.ndarray, obj_speed: np.ndarray, place: np.ndarray,
                  released: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each environment's object is placed: (met (n,) bool, xy error (n,) [m]): within ``success_tol``
        of its place target ``place`` (n, >= 2) in x and y, resting (slower than RESTING_SPEED, obj_speed (n,)
        [m/s]) and ``released`` (n,) bool by every gripper; obj_pos (n, 3) [m], environment frames."""
        error = np.linalg.norm(np.asarray(obj_pos)[:, :2] - np.asarray(place)[:, :2], axis=1)
        return (error <= self.success_tol) & (np.asarray(obj_speed) < RESTING_SPEED) & np.asarray(released), error

    def evaluate(self, state: TaskState) -> Evaluation:
        """Success, stage and reason of every environment at this step (app.tasks.outcome.staged): placed as
        :meth:`placed` says, after having been lifted."""
        placed, error = self.placed(state)
        return staged(state, placed, error, self.success_tol, self.misplaced)

    def placed(self, state: TaskState) -> tuple[np.ndarray, np.ndarray]:
        """(met (n,) bool, error (n,) [m]): the object lies where this task wants it (:meth:`placement` at its
        place target); a task with another goal overrides this and ``misplaced``, its failure's word."""
        return self.placement(state.obj_pos, state.obj_speed, state.place, state.released)

    def places(self, starts: dict[str, tuple[np.ndarray, np.ndarray]], seed: int) -> np.ndarray:
        """The place targets (n_envs, 2) [m] of environments whose objects start at ``starts`` (name -> (pos
        (n_envs, 3), quat (n_envs, 4))): :func:`draw_places` from the object's start."""
        return draw_places(self, starts[self.object][0][:, :2], seed)

    def rest_heights(self, facts) -> np.ndarray:
        """The object's resting centre height at its place (k,) [m] in the environments of ``facts``
        (app.tasks.scene_facts.SceneFacts): where it starts (on the table)."""
        return facts.starts[self.object][0][:, 2].copy()

    def fixtures(self) -> tuple[BoxSpec, ...]:
        """Static boxes the task adds to the scene (the loader appends them to its obstacles): none."""
        return ()

    def arm_objects(self) -> dict[str, str] | None:
        """Arm name -> the object it handles and observes; None: every arm observes ``object`` (the judge's
        TaskState describes the first arm's object: give ``object`` to the first arm)."""
        return None

    def watched(self) -> tuple[str, ...]:
        """The other objects whose positions ``evaluate`` reads (TaskState.others): none."""
        return ()

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        """(key path, link) of what this motion moves: the robot's end effector (see
        app.control.motions.PoseMotion.moved_links)."""
        return [(("robot", "ee_link"), robot.ee_link)]

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """The place target's range and every height, speed, tolerance and time (> 0)."""
        return [
            (at("place_range"), self.place_range is None or all(lo <= hi for lo, hi in zip(*self.place_range)),
             f"needs [[x_lo, y_lo], [x_hi, y_hi]] with lo <= hi, got {self.place_range}"),
            (at("min_separation"), self.min_separation >= 0, f"must be >= 0 m, got {self.min_separation}"),
            self._separation_check(at, ctx),
        ] + [(at(name), getattr(self, name) > 0, f"must be > 0, got {getattr(self, name)}") for name in POSITIVE]

    def _separation_check(self, at: Where, ctx: CheckContext) -> Check:
        """``min_separation`` reachable: some start of the object (its pos or pos_range) and some point of
        ``place_range`` lie that far apart."""
        obj = next((o for o in ctx.scene.objects if o.name == self.object), None)
        if self.place_range is None or obj is None or not all(lo <= hi for lo, hi in zip(*self.place_range)):
            return (at("min_separation"), True, "")
        start = obj.start_range()[:, :2]
        far = farthest(start, np.asarray(self.place_range, dtype=float))
        return (at("min_separation"), far >= self.min_separation,
                f"{self.min_separation} m cannot be met: no point of place_range {self.place_range} is farther than "
                f"{far:.4f} m from any start of {self.object!r}; lower it or widen place_range")


def draw_places(task: ObjectTask, start_xy: np.ndarray, seed: int) -> np.ndarray:
    """Place points (n_envs, 2) [m]: the fixed one, or per environment e a draw from ``place_range`` by the
    generator seeded (seed, 2, e) at least ``min_separation`` from start_xy[e] (n_envs, 2)."""
    n = len(start_xy)
    if task.place_range is None:
        return np.tile(np.asarray(task.place_pos, dtype=float), (n, 1))
    lo, hi = np.asarray(task.place_range, dtype=float)
    out = np.empty((n, 2))
    for e in range(n):
        rng = np.random.default_rng([seed, 2, e])
        for _ in range(PLACE_DRAWS):
            out[e] = rng.uniform(lo, hi)
            if np.linalg.norm(out[e] - start_xy[e]) >= task.min_separation:
                break
        else:
            far = farthest(np.array([start_xy[e], start_xy[e]]), np.array([lo, hi]))
            raise InputError(f"motion.min_separation: environment {e}'s object starts at {np.round(start_xy[e], 4)}; "
                             f"{PLACE_DRAWS} draws from place_range found no place {task.min_separation} m away "
                             f"(the farthest is {far:.4f} m): lower min_separation or widen place_range")
    return out


def farthest(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance [m] between a point of the axis-aligned box ``a`` ((lo), (hi)) and one of ``b``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.linalg.norm(np.maximum(np.abs(a[1] - b[0]), np.abs(b[1] - a[0]))))


def object_task(task) -> ObjectTask | None:
    """``task`` (a run's task section) where it is an object task (an object, an expert, evaluate), else None (a
    motion driven by time, a script, a plan): the one place that asks a task's type."""
    return task if isinstance(task, ObjectTask) else None


def nearest(a: np.ndarray, b: np.ndarray) -> float:
    """The smallest distance [m] between a point of the axis-aligned box ``a`` ((lo), (hi)) and one of ``b``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(b[0] - a[1], a[0] - b[1]))))
