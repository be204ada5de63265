"""What the pick-and-place and hand-over motions share: the object handled, where it goes, the heights, speeds,
tolerances and times they move and judge by, with their checks. Heights [m], speeds [m/s], accelerations
[m/s^2], angular speeds [rad/s], times [s]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.errors import InputError
from app.validation import Check, CheckContext, Where

POSITIVE = ("approach_height", "lift_height", "speed", "accel", "angular_speed", "pos_tol", "rot_tol", "phase_timeout",
            "close_time", "slip_tol", "success_tol")  # what the motions time and judge by
PLACE_DRAWS = 1000  # tries per environment for a place min_separation from its start
RESTING_SPEED = 0.02  # [m/s]: an object slower than this lies where it is


@dataclass(frozen=True)
class ObjectMotion:
    """Move ``object`` and put it down at ``place_pos`` (x, y in the environment's frame [m]), or at a point drawn
    per environment from ``place_range`` ((x_lo, y_lo), (x_hi, y_hi)) at least ``min_separation`` [m] from where
    the object starts; a segment's goal counts as reached within ``pos_tol`` [m] / ``rot_tol`` [rad], a phase
    fails after ``phase_timeout``, the fingers close for ``close_time``, a hold slips past ``slip_tol`` and a
    placement succeeds within ``success_tol`` [m] of its target."""

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


def draw_places(task: ObjectMotion, start_xy: np.ndarray, seed: int) -> np.ndarray:
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
