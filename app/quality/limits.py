"""The limits a motion is judged against (app.quality's motion-quality report), per arm joint.

Velocity and effort come from the robot's description (the URDF's ``<limit velocity effort>``; the WidowX AI's
velocities, 3.375 and 7 rad/s, are below Trossen's controller defaults of 2 pi and 3 pi, its efforts the same:
``app/trossen_arm/standard.py``, whose limits app.trossen_arm judges its arms by). Neither the URDF nor Trossen
documents an acceleration or a jerk limit, so those two are the app's own and say so (``source``):

- acceleration ``ACCEL_MAX`` [rad/s^2]: the bound the app's controllers keep on the motion they command
  (``controller.accel_max``'s default, the environments' joint steps), so a command beyond it is one no controller of
  the app would have made;
- jerk ``ACCEL_MAX / JERK_RISE_S`` [rad/s^3]: the acceleration bound reached from rest in ``JERK_RISE_S``; a
  motion whose acceleration swings faster than that is a knock, not a move.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from app.control.controller_base import ACCEL_MAX, JERK_RISE_S
from app.errors import InputError

MAX_SAMPLE_HZ = 120.0  # samples a second at most: the motion's jerk is judged at about this resolution everywhere (a
# 240 Hz physics step differenced three times is noise, and a 30 Hz waypoint's kink is not a knock)
TOLERANCE = 0.02  # of a limit: a value at most this fraction beyond it is at the limit, not over it
AT_LIMIT = 0.98  # of a limit: from here on a joint counts as at its limit (time at a limit)


class MotionLimits(NamedTuple):
    """Per joint (n,): names, velocity [rad/s or m/s], acceleration [.../s^2], jerk [.../s^3], effort [N m or N]
    (inf: not judged); ``source`` names where the acceleration and jerk limits come from."""

    names: tuple[str, ...]
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray
    effort: np.ndarray
    source: str

    @classmethod
    def make(cls, names, velocity, effort, source: str, accel_max: float | None = None,
             jerk_max: float | None = None) -> MotionLimits:
        """Limits of the joints ``names``: ``velocity`` and ``effort`` (n,) as given (where ``source`` says they come
        from), acceleration ``accel_max`` (None: ACCEL_MAX, a controller that keeps no bound of its own) and jerk
        ``jerk_max`` (default ``accel_max / JERK_RISE_S``) for each."""
        accel_max = ACCEL_MAX if accel_max is None else accel_max
        jerk_max = accel_max / JERK_RISE_S if jerk_max is None else jerk_max
        for name, value in (("accel_max", accel_max), ("jerk_max", jerk_max)):
            if not value > 0:
                raise InputError(f"motion limits: {name} must be > 0, got {value}")
        n = len(names)
        return cls(tuple(names), _positive(velocity), np.full(n, float(accel_max)), np.full(n, float(jerk_max)),
                   _positive(effort), f"velocity, effort: {source}; acceleration {accel_max:g}, jerk {jerk_max:g}: "
                                      "the app's controller bound (none documented)")

    @classmethod
    def of_model(cls, model, dofs: np.ndarray | None = None, accel_max: float | None = None,
                 jerk_max: float | None = None) -> MotionLimits:
        """The limits of ``model``'s DOFs ``dofs`` (default all), velocity and effort from its description."""
        idx = np.arange(len(model.dof_names)) if dofs is None else np.asarray(dofs, dtype=int)
        return cls.make([model.dof_names[k] for k in idx], model.v_max[idx], model.effort_max[idx],
                        "the robot description", accel_max, jerk_max)

    def to_dict(self) -> dict:
        """JSON-ready: each limit per joint name (null where not judged)."""
        def row(values):
            return {n: (float(v) if np.isfinite(v) else None) for n, v in zip(self.names, values)}
        return {"velocity": row(self.velocity), "acceleration": row(self.acceleration), "jerk": row(self.jerk),
                "effort": row(self.effort), "source": self.source}


def samples_every(ticks_hz: float) -> int:
    """Ticks between two motion samples of a loop ticking ``ticks_hz`` times a second: at most MAX_SAMPLE_HZ
    samples a second."""
    return max(1, math.ceil(ticks_hz / MAX_SAMPLE_HZ))


def _positive(values) -> np.ndarray:
    """Limits as floats, a missing (0, negative, NaN) one as inf: not judged."""
    v = np.asarray(values, dtype=float)
    return np.where(np.isfinite(v) & (v > 0), v, np.inf)
