"""Time parameterisation of a piecewise-straight joint path with Ruckig (PyPI ``ruckig``), sampled at a fixed rate
into (t, q, qd, qdd); position, velocity and acceleration are continuous (the jerk is bounded).

Without a ``valid`` check each edge is a time-optimal motion from rest to rest along the edge's own line
(app.planning.timing_edges), so the motion stays on the checked straight edges exactly, stopping at every
waypoint. With one (the planner's clearance: app.planning.planner.path_check) the motion passes through the
corners where its dense check allows (app.planning.blending) and stops where it does not.

Limits: ``v_max`` (n,) [rad/s] (the URDF's, or lower), ``a_max`` [rad/s^2] and ``j_max`` [rad/s^3] (scalars or
(n,)).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from app.errors import InputError
from app.planning.blending import blended_edges
from app.planning.timing_edges import line_edge

DEFAULT_ACCELERATION = 8.0  # [rad/s^2]
DEFAULT_JERK = 80.0  # [rad/s^3]
# Limits above these are timed as these (the motion stays within the given limits, and is no slower than a
# sample at 1 kHz can tell): Ruckig's input check refuses numbers far beyond them (a jerk of 1e300).
MAX_VELOCITY, MAX_ACCELERATION, MAX_JERK = 1e3, 1e6, 1e9  # [rad/s], [rad/s^2], [rad/s^3]
MAX_DURATION_S = 3600.0  # a timed path's longest motion, checked before any timing


class TimedTrajectory(NamedTuple):
    """Samples at a fixed ``rate`` [Hz]: t (K,) [s] from 0, q (K, n) [rad or m], qd (K, n) [rad/s], qdd (K, n)
    [rad/s^2]; t[k] = k / rate exactly, the last sample at rest at the goal (at or just after the motion's end)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    rate: float

    @property
    def duration(self) -> float:
        return float(self.t[-1])


def _limits(value, n: int, name: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)) if np.ndim(value) == 0 else np.asarray(value, float)
    if arr.shape != (n,) or not np.isfinite(arr).all() or not (arr > 0).all():
        raise InputError(f"{name} must be a finite number > 0 or {n} of them, got {value!r}")
    return arr.copy()


def _least_duration(path: np.ndarray, v: np.ndarray, acc: np.ndarray, jerk: np.ndarray) -> float:
    """A lower bound [s] of the path's rest-to-rest timing: per edge and DOF the least time of a move of d at
    each limit alone (d / v, 2 sqrt(d / a), (32 d / j)^(1/3)), the largest per edge, summed."""
    d = np.abs(np.diff(path, axis=0))
    per_dof = np.maximum(np.maximum(d / v, 2 * np.sqrt(d / acc)), np.cbrt(32 * d / jerk))
    return float(per_dof.max(axis=1).sum()) if len(d) else 0.0


def time_parameterize(path: np.ndarray, v_max: object, a_max: object = DEFAULT_ACCELERATION,
                      j_max: object = DEFAULT_JERK, rate: float = 200.0,
                      valid: Callable[[np.ndarray], np.ndarray] | None = None,
                      check_resolution: float = 0.001) -> TimedTrajectory:
    """The path (N, n) timed edge by edge and sampled every 1 / ``rate`` [s].

    Args:
        valid: None: every edge from rest to rest on its line. Else a check of configurations (K, n) -> (K,) bool
            (the planner's clearance and joint windows): corners are passed where the timed motion, sampled at
            ``check_resolution`` [rad] per DOF, passes it (app.planning.blending).
    Raises:
        InputError: a path that is not (N >= 1, n) finite, non-positive limits, rate or check_resolution.
    """
    import ruckig

    path = np.asarray(path, dtype=float)
    if path.ndim != 2 or len(path) == 0 or not np.isfinite(path).all():
        raise InputError(f"path must be finite waypoints of shape (N, n_dofs), got shape {path.shape}")
    if not (np.isfinite(rate) and rate > 0):
        raise InputError(f"rate must be a finite number > 0 [Hz], got {rate}")
    n = path.shape[1]
    v, acc, jerk = (np.minimum(_limits(lim, n, name), cap) for lim, name, cap in
                    ((v_max, "v_max", MAX_VELOCITY), (a_max, "a_max", MAX_ACCELERATION), (j_max, "j_max", MAX_JERK)))
    keep = np.concatenate([[True], np.abs(np.diff(path, axis=0)).max(axis=1) > 1e-12])
    path = path[keep]
    at_least = _least_duration(path, v, acc, jerk)
    if at_least > MAX_DURATION_S:
        raise InputError(f"the path would take at least {at_least:.4g} s within v_max {v.tolist()}, a_max "
                         f"{acc.tolist()}, j_max {jerk.tolist()}; a timed path lasts at most {MAX_DURATION_S:g} s "
                         "(raise the limits)")
    if not (np.isfinite(check_resolution) and check_resolution > 0):
        raise InputError(f"check_resolution must be a finite number > 0 [rad], got {check_resolution}")
    if valid is not None and len(path) > 2:
        trajs = blended_edges(ruckig, path, v, acc, jerk, valid, float(check_resolution))
    else:
        trajs = [line_edge(ruckig, a, b, v, acc, jerk) for a, b in itertools.pairwise(path)]
    ends = np.cumsum([0.0] + [tr.duration for tr in trajs])
    steps = int(np.ceil(ends[-1] * rate - 1e-9))
    t = np.arange(steps + 1) / rate  # the last sample at or just after the end: at rest there
    q, qd, qdd = (np.zeros((len(t), n)) for _ in range(3))
    q[:] = path[-1]
    which = np.clip(np.searchsorted(ends, t, side="right") - 1, 0, max(len(trajs) - 1, 0))
    for k, tk in enumerate(t):
        if not trajs or tk >= ends[-1]:
            continue
        q[k], qd[k], qdd[k] = trajs[which[k]].at_time(float(tk - ends[which[k]]))
    return TimedTrajectory(t, q, qd, qdd, float(rate))
