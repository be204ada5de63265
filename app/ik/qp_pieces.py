"""How the tasks and limits of one QP combine, slot by slot (mink's and pink's shape: every task adds
weighted rows to the objective, every limit adds inequality rows; they are summed and stacked).

    frame         FrameTask      every task kept: a tuple, one parameter set each (their rows stacked)
    rows_task     RowsTask       rows stacked
    posture       PostureTask    summed: one posture of the summed weight (exactly the sum of the costs)
    joint_box     JointLimits    every box kept: a tuple, intersected per configuration in compiled code
    velocity_box  VelocityBox    intersected
    distance      CollisionLimit rows stacked (closest first per configuration); one margin per QP
    rows_limit    RowsLimit      rows stacked

Two pieces that cannot be combined (different robots, disjoint boxes, two margins) raise
:class:`~app.errors.IncompatibleError` naming both; nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from app.errors import IncompatibleError, InputError
from app.ik.limits.distance import DistanceParams
from app.ik.limits.given_rows import RowsLimitParams
from app.ik.limits.velocity_box import VelocityBoxParams
from app.ik.tasks.given_rows import RowsParams
from app.ik.tasks.posture import PostureParams

TASK_SLOTS = ("frame", "rows_task", "posture")
LIMIT_SLOTS = ("joint_box", "velocity_box", "distance", "rows_limit")
SLOTS = TASK_SLOTS + LIMIT_SLOTS


def _dofs(piece: object, n_piece: int, n: int) -> None:
    if n_piece != n:
        raise InputError(f"{piece!r} is for {n_piece} DOFs; this QP has {n}")


def _frames(n: int, batch: int, dt: float, tasks: Sequence) -> tuple:
    first = tasks[0]
    for task in tasks[1:]:
        if task.model is not first.model:
            raise IncompatibleError(first, task, f"frame tasks of two robot models ({first.model!r}, {task.model!r}); "
                                                 "one QP moves one robot's DOFs")
    params = tuple(task.params(batch) for task in tasks)
    _dofs(first, params[0].fk.axis.shape[0], n)
    return params


def _rows_task(n: int, batch: int, dt: float, tasks: Sequence) -> RowsParams:
    params = [task.params(batch) for task in tasks]
    for task, p in zip(tasks, params):
        _dofs(task, p.J.shape[2], n)
    if len(params) == 1:
        return params[0]
    return RowsParams(np.concatenate([p.J for p in params], axis=1), np.concatenate([p.V for p in params], axis=1))


def _posture(n: int, batch: int, dt: float, tasks: Sequence) -> PostureParams:
    """sum_i w_i/2 |N (qdot - g_i (r_i - q))|^2 is W/2 |N (qdot - G (r - q))|^2 + const with W = sum w_i,
    G = sum w_i g_i / W and r = sum w_i g_i r_i / (W G)."""
    params = [task.params(batch) for task in tasks]
    for task, p in zip(tasks, params):
        _dofs(task, len(p.q_ref), n)
    if len(params) == 1:
        return params[0]
    W = sum(p.weight for p in params)
    wg = sum(p.weight * p.gain for p in params)
    if W <= 0.0 or wg == 0.0:  # no posture term, or a zero preferred velocity
        return PostureParams(np.ascontiguousarray(params[0].q_ref), 0.0, W)
    ref = sum(p.weight * p.gain * p.q_ref for p in params) / wg
    return PostureParams(np.ascontiguousarray(ref, dtype=float), wg / W, W)


def _joint_boxes(n: int, batch: int, dt: float, limits: Sequence) -> tuple:
    params = tuple(limit.params(dt) for limit in limits)
    for limit, p in zip(limits, params):
        _dofs(limit, len(p.v_max), n)
    return params


def _velocity_box(n: int, batch: int, dt: float, limits: Sequence) -> VelocityBoxParams:
    params = [limit.params(batch) for limit in limits]
    _dofs(limits[0], params[0].lo.shape[1], n)
    lo, hi = params[0].lo, params[0].hi
    for limit, p in zip(limits[1:], params[1:]):
        _dofs(limit, p.lo.shape[1], n)
        lo, hi = np.maximum(lo, p.lo), np.minimum(hi, p.hi)
        if np.any(lo > hi):
            raise IncompatibleError(limits[0], limit, "their velocity boxes do not overlap (no velocity satisfies "
                                                      "both)")
    return VelocityBoxParams(True, np.ascontiguousarray(lo), np.ascontiguousarray(hi))


def _distance(n: int, batch: int, dt: float, limits: Sequence) -> DistanceParams:
    params = [limit.params(dt) for limit in limits]
    for limit, p in zip(limits, params):
        if len(p.distance):
            _dofs(limit, p.J_ab.shape[2], n)
    if len(params) == 1:
        return params[0]
    first = params[0]
    for limit, p in zip(limits[1:], params[1:]):
        if (p.d_safe, p.gamma) != (first.d_safe, first.gamma):
            raise IncompatibleError(limits[0], limit, "collision limits with different d_safe or gamma; the QP keeps "
                                                      "one margin: give both pairs' rows to one CollisionLimit")
    used = [p for p in params if len(p.distance)]
    if not used:
        return first
    distance = np.concatenate([p.distance for p in used])
    env = np.concatenate([p.env for p in used])
    order = np.lexsort((distance, env))  # grouped by configuration, closest first
    f = lambda a: np.ascontiguousarray(a[order])  # noqa: E731
    return DistanceParams(f(distance), f(np.concatenate([p.normal for p in used])),
                          f(np.concatenate([p.J_ab for p in used])), f(env), first.d_safe, first.gamma, first.dt)


def _rows_limit(n: int, batch: int, dt: float, limits: Sequence) -> RowsLimitParams:
    params = [limit.params(batch) for limit in limits]
    for limit, p in zip(limits, params):
        _dofs(limit, p.G.shape[2], n)
    if len(params) == 1:
        return params[0]
    count = sum(p.count for p in params)
    K = int(count.max(initial=0))
    G, lo, hi = np.zeros((batch, K, n)), np.zeros((batch, K)), np.zeros((batch, K))
    used = np.zeros(batch, dtype=np.int64)
    for p in params:
        for b in range(batch):
            k, c = used[b], p.count[b]
            G[b, k:k + c], lo[b, k:k + c], hi[b, k:k + c] = p.G[b, :c], p.lo[b, :c], p.hi[b, :c]
        used += p.count
    return RowsLimitParams(G, lo, hi, count.astype(np.int64))


COMBINE: dict[str, Callable] = {"frame": _frames, "rows_task": _rows_task, "posture": _posture,
                                "joint_box": _joint_boxes, "velocity_box": _velocity_box, "distance": _distance,
                                "rows_limit": _rows_limit}


def combined_slots(n: int, batch: int, dt: float, tasks: Sequence, limits: Sequence) -> dict:
    """The parameters of every slot that some task or limit fills, each slot's pieces combined (see the module
    docstring). A task given as a limit, or a limit as a task, is an InputError too."""
    groups: dict[str, list] = {}
    for kind, pieces, allowed in (("task", tasks, TASK_SLOTS), ("limit", limits, LIMIT_SLOTS)):
        for piece in pieces:
            slot = getattr(piece, "slot", None)
            if slot not in allowed:
                raise InputError(f"{piece!r} is not a QP {kind}: {kind}s fill the slots {list(allowed)} "
                                 f"(tasks: {list(TASK_SLOTS)}, limits: {list(LIMIT_SLOTS)})")
            groups.setdefault(slot, []).append(piece)
    return {slot: COMBINE[slot](n, batch, dt, group) for slot, group in groups.items()}
