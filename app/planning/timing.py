"""Time parameterisation of a piecewise-straight joint path with Ruckig (PyPI ``ruckig``): each edge is a
time-optimal, jerk-limited motion from rest to rest along the edge's own line (Ruckig on the path parameter),
so the motion stays on the checked straight edges exactly (every DOF moves in proportion) and position, velocity and acceleration are continuous (the jerk
is bounded). Sampled at a fixed rate into (t, q, qd, qdd).

Limits: ``v_max`` (n,) [rad/s] (the URDF's, or lower), ``a_max`` [rad/s^2] and ``j_max`` [rad/s^3] (scalars or
(n,)). Stopping at every waypoint costs time on long paths of many short edges; shortcutting first keeps few.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from app.errors import AppError, InputError

DEFAULT_ACCELERATION = 8.0  # [rad/s^2]
DEFAULT_JERK = 80.0  # [rad/s^3]


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


class TimingError(AppError):
    """Ruckig could not time an edge (its result is given)."""


def _limits(value, n: int, name: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)) if np.ndim(value) == 0 else np.asarray(value, float)
    if arr.shape != (n,) or not np.isfinite(arr).all() or not (arr > 0).all():
        raise InputError(f"{name} must be a finite number > 0 or {n} of them, got {value!r}")
    return arr.copy()


class _Edge(NamedTuple):
    """One straight edge a -> b timed as the 1-DOF motion of s from 0 to 1 (q = a + s (b - a))."""

    a: np.ndarray
    delta: np.ndarray
    traj: object

    @property
    def duration(self) -> float:
        return float(self.traj.duration)

    def at_time(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, ds, dds = self.traj.at_time(t)
        return self.a + s[0] * self.delta, ds[0] * self.delta, dds[0] * self.delta


def _edge(ruckig, a: np.ndarray, b: np.ndarray, v: np.ndarray, acc: np.ndarray, jerk: np.ndarray) -> _Edge:
    """The edge timed along its own line: Ruckig on the path parameter s with the tightest of every DOF's limits
    divided by its share of the edge, so every DOF moves in proportion exactly (Ruckig's phase synchronisation of
    the DOFs themselves falls back to time synchronisation, off the line, where the per-DOF limits differ)."""
    delta = b - a
    share = np.abs(delta)
    moving = share > 0
    limit = [float(np.min(lim[moving] / share[moving])) for lim in (v, acc, jerk)]
    inp = ruckig.InputParameter(1)
    inp.current_position, inp.target_position = [0.0], [1.0]
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = [limit[0]], [limit[1]], [limit[2]]
    traj = ruckig.Trajectory(1)
    result = ruckig.Ruckig(1).calculate(inp, traj)
    if result not in (ruckig.Result.Working, ruckig.Result.Finished):
        raise TimingError(f"ruckig could not time the edge {a.tolist()} -> {b.tolist()}: {result}")
    return _Edge(a, delta, traj)


def time_parameterize(path: np.ndarray, v_max: object, a_max: object = DEFAULT_ACCELERATION,
                      j_max: object = DEFAULT_JERK, rate: float = 200.0) -> TimedTrajectory:
    """The path (N, n) timed edge by edge (rest to rest) and sampled every 1 / ``rate`` [s].

    Raises:
        InputError: a path that is not (N >= 1, n) finite, non-positive limits or rate.
    """
    import ruckig

    path = np.asarray(path, dtype=float)
    if path.ndim != 2 or len(path) == 0 or not np.isfinite(path).all():
        raise InputError(f"path must be finite waypoints of shape (N, n_dofs), got shape {path.shape}")
    if not (np.isfinite(rate) and rate > 0):
        raise InputError(f"rate must be a finite number > 0 [Hz], got {rate}")
    n = path.shape[1]
    v, acc, jerk = _limits(v_max, n, "v_max"), _limits(a_max, n, "a_max"), _limits(j_max, n, "j_max")
    keep = np.concatenate([[True], np.abs(np.diff(path, axis=0)).max(axis=1) > 1e-12])
    path = path[keep]
    trajs = [_edge(ruckig, a, b, v, acc, jerk) for a, b in itertools.pairwise(path)]
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
