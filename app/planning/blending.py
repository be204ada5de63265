"""Timing that passes through a path's corners instead of stopping at each: every waypoint whose edges turn by at
most MAX_TURN gets a pass-through velocity along the bisector of its edges, each edge between two such states is
one multi-DOF Ruckig motion (jerk-limited, time-synchronised), and an edge so timed is kept only where its motion,
sampled at ``check_resolution`` [rad] per DOF, passes the caller's ``valid`` check (the planner's own clearance and
joint windows); where it does not, the corner speeds at its ends are halved, then zeroed: an edge from rest to rest
is timed along its own line (app.planning.timing), on the checked straight edge, as before. A blended edge leaves
the straight line between its waypoints (it is not on the planned edges) but no more than its check allows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from app.planning.timing_edges import LineEdge, line_edge

MAX_TURN = np.radians(60.0)  # corners turning more than this are passed at rest
GIVE_UP = 0.2  # a corner's speed factor below this (after halvings) becomes 0: a stop


class CurveEdge:
    """One edge as a multi-DOF Ruckig trajectory between two states (q, qd, qdd = 0); ``at_time`` as LineEdge's."""

    def __init__(self, traj):
        self.traj = traj

    @property
    def duration(self) -> float:
        return float(self.traj.duration)

    def at_time(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = self.traj.at_time(t)
        return np.asarray(q), np.asarray(qd), np.asarray(qdd)


def _along(limit: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per unit direction u (E, n): the largest rate along it that keeps every DOF within ``limit`` (n,)."""
    return np.array([np.min(limit[row != 0] / np.abs(row[row != 0])) for row in u])


def corner_velocities(path: np.ndarray, v: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """Pass-through velocities (N, n) at the waypoints of ``path`` (N, n), zero at the ends and at corners turning
    more than MAX_TURN: along the bisector of the two edges' directions, as fast as the slower edge's line speed
    times cos(turn / 2) and as a start from rest reaches over either edge at its line acceleration (sqrt(a L):
    a short edge is not overshot), within every DOF's limit ``v`` (n,)."""
    out = np.zeros_like(path)
    d = np.diff(path, axis=0)
    length = np.linalg.norm(d, axis=1)
    u = d / length[:, None]
    line = np.minimum(_along(v, u), np.sqrt(_along(acc, u) * length))  # [rad/s] along each edge
    for i in range(1, len(path) - 1):
        cos_turn = float(np.clip(u[i - 1] @ u[i], -1.0, 1.0))
        if np.arccos(cos_turn) > MAX_TURN:
            continue
        bisector = (u[i - 1] + u[i]) / np.linalg.norm(u[i - 1] + u[i])
        vel = min(line[i - 1], line[i]) * np.sqrt((1.0 + cos_turn) / 2.0) * bisector
        out[i] = vel * min(1.0, float(np.min(v / np.maximum(np.abs(vel), 1e-300))))
    return out


def _curve(ruckig, qa, va, qb, vb, v, acc, jerk) -> CurveEdge | None:
    """Ruckig from (qa, va, 0) to (qb, vb, 0) within the per-DOF limits; None where it finds no trajectory."""
    n = len(qa)
    inp = ruckig.InputParameter(n)
    inp.current_position, inp.current_velocity, inp.current_acceleration = qa.tolist(), va.tolist(), [0.0] * n
    inp.target_position, inp.target_velocity, inp.target_acceleration = qb.tolist(), vb.tolist(), [0.0] * n
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = v.tolist(), acc.tolist(), jerk.tolist()
    traj = ruckig.Trajectory(n)
    try:
        result = ruckig.Ruckig(n).calculate(inp, traj)
    except ruckig.RuckigError:  # its input check refused the numbers: the corner is not blended
        return None
    return CurveEdge(traj) if result in (ruckig.Result.Working, ruckig.Result.Finished) else None


def _clear(edge: CurveEdge, valid: Callable[[np.ndarray], np.ndarray], v: np.ndarray, resolution: float) -> bool:
    """Whether ``edge``'s motion passes ``valid`` sampled so that no DOF moves more than ``resolution`` between
    samples (every DOF stays within its speed limit ``v``, so time steps of resolution / max(v) do)."""
    steps = max(2, int(np.ceil(edge.duration * float(np.max(v)) / resolution)) + 1)
    q = np.array([edge.at_time(t)[0] for t in np.linspace(0.0, edge.duration, steps)])
    return bool(np.all(valid(q)))


def blended_edges(ruckig, path: np.ndarray, v: np.ndarray, acc: np.ndarray, jerk: np.ndarray,
                  valid: Callable[[np.ndarray], np.ndarray], resolution: float) -> list[LineEdge | CurveEdge]:
    """The edges of ``path`` (N >= 2, n; no repeated waypoints) timed through its corners where ``valid`` allows
    (see the module); every edge between two rests is a LineEdge."""
    base = corner_velocities(path, v, acc)
    factor = (np.abs(base).max(axis=1) > 0).astype(float)
    lines = [line_edge(ruckig, a, b, v, acc, jerk) for a, b in itertools.pairwise(path)]
    edges: list = list(lines)
    stale = {k for k in range(len(edges)) if factor[k] > 0 or factor[k + 1] > 0}
    while stale:
        failed = set()
        for k in sorted(stale):
            va, vb = factor[k] * base[k], factor[k + 1] * base[k + 1]
            if not (va.any() or vb.any()):
                edges[k] = lines[k]
                continue
            edge = _curve(ruckig, path[k], va, path[k + 1], vb, v, acc, jerk)
            # kept when clear and no slower than the stop-to-stop line (a slower one turns back on itself)
            if edge is not None and edge.duration <= lines[k].duration and _clear(edge, valid, v, resolution):
                edges[k] = edge
            else:
                failed.add(k)
        stale = set()
        for k in failed:
            for i in (k, k + 1):
                if factor[i] > 0:
                    factor[i] = 0.0 if factor[i] / 2 < GIVE_UP else factor[i] / 2
                    stale |= {j for j in (i - 1, i) if 0 <= j < len(edges)}
    return edges
