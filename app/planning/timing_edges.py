"""One straight edge of a joint path timed by Ruckig along its own line: the 1-DOF motion of the path parameter
from rest to rest, with the tightest of every DOF's limits divided by its share of the edge, so every DOF moves in
proportion and the motion stays exactly on the edge (app.planning.timing; app.planning.blending's fallback)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.errors import AppError


class TimingError(AppError):
    """Ruckig could not time an edge (its result is given)."""


class LineEdge(NamedTuple):
    """One straight edge a -> b timed as the 1-DOF motion of s from 0 to L = max |b - a| (q = a + s * delta,
    delta = (b - a) / L: s in the units of the DOF that moves most, so a tiny edge keeps ordinary limits)."""

    a: np.ndarray
    delta: np.ndarray
    traj: object

    @property
    def duration(self) -> float:
        return float(self.traj.duration)

    def at_time(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, qd, qdd (n,) each at ``t`` [s] from the edge's start."""
        s, ds, dds = self.traj.at_time(t)
        return self.a + s[0] * self.delta, ds[0] * self.delta, dds[0] * self.delta


def line_edge(ruckig, a: np.ndarray, b: np.ndarray, v: np.ndarray, acc: np.ndarray, jerk: np.ndarray) -> LineEdge:
    """The edge a -> b (n,) timed along its own line within the per-DOF limits v, acc, jerk (n,) (Ruckig's phase
    synchronisation of the DOFs themselves falls back to time synchronisation, off the line, where the per-DOF
    limits differ: a carry's timed path once came 0.8 mm inside the planner's clearance)."""
    length = float(np.max(np.abs(b - a)))
    delta = (b - a) / length
    share = np.abs(delta)
    moving = share > 0
    limit = [float(np.min(lim[moving] / share[moving])) for lim in (v, acc, jerk)]
    inp = ruckig.InputParameter(1)
    inp.current_position, inp.target_position = [0.0], [length]
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = [limit[0]], [limit[1]], [limit[2]]
    traj = ruckig.Trajectory(1)
    try:
        result = ruckig.Ruckig(1).calculate(inp, traj)
    except ruckig.RuckigError as exc:  # its input check refused the numbers
        result = str(exc).strip().splitlines()[0]
    if result not in (ruckig.Result.Working, ruckig.Result.Finished):
        raise TimingError(f"ruckig could not time the edge {a.tolist()} -> {b.tolist()} within velocity "
                          f"{limit[0]:g}, acceleration {limit[1]:g}, jerk {limit[2]:g} (per unit of the DOF that "
                          f"moves most): {result}")
    return LineEdge(a, delta, traj)
