"""What every object task shares: the object handled, where it goes, the heights, speeds, tolerances and times its
expert moves and judges by, with their checks, and ``evaluate``: whether an episode succeeded, from the simulator's
state alone, the one judgement app.run's report, app.record's kept/failed filter and app.envs' ``is_success`` all
use. Heights [m], speeds [m/s], accelerations [m/s^2], angular speeds [rad/s], times [s].

Stages (the step's reward): 0 nothing, 1 a finger touched the object, 2 every finger of a gripper holds it,
3 held and lifted ``LIFT`` above its start, 4 placed: within ``success_tol`` of the place target in x and y,
resting and released by every gripper (:meth:`ObjectTask.placement`), after having been lifted. A failure's
reason: ``collision`` (an arm link touched the table, an obstacle or another object, or a link other than the
fingers touched the object, at any step), else by the stage reached: ``not_touched``, ``grasp_missed`` (touched,
never held), ``not_lifted``, ``fell`` (the object ended below where it started), ``not_released`` (at the place,
still touched), ``misplaced`` (released off target), ``timeout`` (still carrying).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from app.errors import InputError
from app.validation import Check, CheckContext, Where

POSITIVE = ("approach_height", "lift_height", "speed", "accel", "angular_speed", "pos_tol", "rot_tol", "phase_timeout",
            "close_time", "slip_tol", "success_tol")  # what the motions time and judge by
PLACE_DRAWS = 1000  # tries per environment for a place min_separation from its start
RESTING_SPEED = 0.02  # [m/s]: an object slower than this lies where it is
LIFT = 0.01  # [m] above the start: lifted
FALL = 0.02  # [m] below the start: fell off the table
OPEN = 0.1  # closing fraction under which a gripper counts as open
REASONS = ("collision", "not_touched", "grasp_missed", "not_lifted", "fell", "not_released", "misplaced", "timeout")


class TaskState(NamedTuple):
    """What ``evaluate`` reads of one step, (n_envs, ...) each, environment frames: the task object's position
    obj_pos (n, 3) [m] and speed obj_speed (n,) [m/s]; touched (a finger of some gripper on it), held (every finger
    of one gripper), released (every gripper open and off it), collided (this step, see the module docstring):
    (n,) bool; start_z (n,) [m]: the object's start height; place (n, 2) [m]: its place target; best (n,) int:
    the highest stage of the steps before; ever_collided (n,) bool: a collision at an earlier step."""

    obj_pos: np.ndarray
    obj_speed: np.ndarray
    touched: np.ndarray
    held: np.ndarray
    released: np.ndarray
    collided: np.ndarray
    start_z: np.ndarray
    place: np.ndarray
    best: np.ndarray
    ever_collided: np.ndarray


class Evaluation(NamedTuple):
    """A step's judgement, (n_envs,) each: success (bool), stage (int, the task's stages), place_error_m (xy [m]),
    collided (this step), and reason: per environment why the episode has not succeeded if it ended now ('' on
    success), a word of the task's ``reasons``."""

    success: np.ndarray
    stage: np.ndarray
    place_error_m: np.ndarray
    collided: np.ndarray
    reason: list[str]


@dataclass(frozen=True)
class ObjectTask:
    """Move ``object`` and put it down at ``place_pos`` (x, y in the environment's frame [m]), or at a point drawn
    per environment from ``place_range`` ((x_lo, y_lo), (x_hi, y_hi)) at least ``min_separation`` [m] from where
    the object starts; a segment's goal counts as reached within ``pos_tol`` [m] / ``rot_tol`` [rad], a phase
    fails after ``phase_timeout``, the fingers close for ``close_time``, a hold slips past ``slip_tol`` and a
    placement succeeds within ``success_tol`` [m] of its target."""

    robots: ClassVar[str] = "one arm with a gripper"  # what the task needs of the scene's robot (app.eval --list-tasks)
    config: ClassVar[str] = ""  # the shipped run file of the task (configs/...)
    n_arms: ClassVar[int] = 1  # the arms the expert moves (its observations: one arm's, or every arm's by name)
    reasons: ClassVar[tuple[str, ...]] = REASONS  # the words evaluate gives a failure
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
        """Success, stage and reason of every environment at this step (see the module docstring)."""
        s = state
        lifted = s.held & (s.obj_pos[:, 2] > s.start_z + LIFT)
        placed, error = self.placement(s.obj_pos, s.obj_speed, s.place, s.released)
        success = placed & (s.best >= 3)
        stage = np.select([success, lifted, s.held, s.touched], [4, 3, 2, 1], 0)
        best, collided = np.maximum(s.best, stage), s.ever_collided | s.collided
        reason = [self._reason(e, success, collided, best, s, error) for e in range(len(success))]
        return Evaluation(success, stage, error, s.collided, reason)

    def _reason(self, e: int, success, collided, best, s: TaskState, error) -> str:
        if success[e]:
            return ""
        if collided[e]:
            return "collision"
        if best[e] < 3:
            return ("not_touched", "grasp_missed", "not_lifted")[best[e]]
        if s.obj_pos[e, 2] < s.start_z[e] - FALL:
            return "fell"
        if error[e] <= self.success_tol and not s.released[e]:
            return "not_released"
        return "misplaced" if s.released[e] else "timeout"

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
        start = np.asarray(obj.pos_range if obj.pos_range is not None else (obj.pos, obj.pos), dtype=float)[:, :2]
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
