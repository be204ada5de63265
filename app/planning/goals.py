"""Goals as users give them -> a set of valid goal configurations the planner may reach any of.

A goal is joint values (one configuration (n,) or several (G, n), n = n_active or n_dofs) or end-effector poses:
one :class:`PoseGoal`, or one per arm (the Stationary AI's two arms: every arm's pose at once). Pose goals become
collision-free IK solutions: every closed-form branch where the arm has a closed form and the pose is full
(app.ik.analytic), else the collision-free numeric IK (app.ik.collision_free) from several starts, which also
takes ``pos_mask`` / ``rot_mask``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from app.errors import InputError
from app.ik.analytic import analytic_ik, certified_arm
from app.ik.api import inverse_kinematics
from app.ik.collision_free import collision_free_ik
from app.planning.space import PlanningSpace
from app.validation import as_mask, as_point, as_quaternions, as_rot_mask

MAX_COMBOS = 64  # per-arm candidates combined at most (two arms: 8 x 8)
DUPLICATE = 1e-3  # [rad] goals closer than this in every DOF count once


class PoseGoal(NamedTuple):
    """A pose of ``link`` in the model's base frame: pos (3,) [m], quat (w, x, y, z); ``pos_mask`` / ``rot_mask``
    (3 bools each, Genesis's meaning): which position axes and which link axes must match."""

    link: str
    pos: tuple
    quat: tuple = (1.0, 0.0, 0.0, 0.0)
    pos_mask: tuple = (True, True, True)
    rot_mask: tuple = (True, True, True)


class GoalSet(NamedTuple):
    """q (G, n_active) valid goal configurations, nearest to the start first (G may be 0); reason: None, or
    ``goal_in_collision`` / ``no_ik_goal`` when G is 0; detail: what was found closest (for messages)."""

    q: np.ndarray
    reason: str | None
    detail: str = ""


def is_pose_goal(goal: object) -> bool:
    return isinstance(goal, PoseGoal) or (isinstance(goal, (list, tuple)) and len(goal) > 0
                                          and all(isinstance(g, PoseGoal) for g in goal))


def check_pose_goal(model, goal: PoseGoal) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``goal``'s fields checked: its link exists, pos (3,) finite [m], quat a finite nonzero (w, x, y, z),
    pos_mask 3 booleans, rot_mask 3 booleans aligning 0, 1 or 3 axes. Returns (pos, unit quat, pos_mask,
    rot_mask). Raises InputError / UnknownNameError naming the field."""
    model.link_index(goal.link)
    return (as_point(goal.pos, f"{goal.link} goal pos"),
            as_quaternions(goal.quat, f"{goal.link} goal quat").reshape(4),
            as_mask(goal.pos_mask, "pos_mask"), as_rot_mask(goal.rot_mask))


def joint_goal_array(model, dofs: np.ndarray, goal: object, name: str = "qpos_goal") -> np.ndarray:
    """Joint goals (n,) or (G, n), n = len(dofs) or n_dofs (then the other DOFs are ignored), checked finite and
    inside the joint windows: the planned DOFs' values (G, len(dofs))."""
    arr = np.asarray(goal, dtype=float) if not isinstance(goal, str) else None
    n_dofs, n_active = model.n_dofs, len(dofs)
    if arr is None or arr.ndim not in (1, 2) or arr.shape[-1] not in (n_active, n_dofs) or arr.size == 0:
        raise InputError(f"{name} must have shape ({n_active},) or ({n_dofs},), or (G, ...) for G goals; "
                         f"got {getattr(arr, 'shape', type(goal).__name__)}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} must be finite, got {arr.tolist()}")
    q = np.atleast_2d(arr)
    if q.shape[-1] == n_dofs and n_dofs != n_active:
        return model.check_window(q, name)[:, dofs]
    return model.check_window(q, name, dofs=dofs)


def joint_goals(space: PlanningSpace, goal: object, name: str = "qpos_goal") -> GoalSet:
    """Joint goals (see joint_goal_array) that are valid in ``space``."""
    q = joint_goal_array(space.model, space.dofs, goal, name)
    ok = space.valid(q)
    if not ok.any():
        d, _ = space.collision.distances(space.full(q[:1]), with_gradient=False)
        return GoalSet(q[:0], "goal_in_collision", f"closest pair {space.collision.closest(d)[0]}")
    return GoalSet(q[ok], None)


def _chain_dofs(model, link: str) -> np.ndarray:
    li = model.link_index(link)
    return np.array([k for k in range(model.n_dofs) if li in model.links_moved_by(k)], dtype=np.int64)


def _arm_candidates(space: PlanningSpace, goal: PoseGoal, q_start: np.ndarray, tries: int,
                    seed: int) -> np.ndarray:
    """Full configurations (C, n_dofs) reaching ``goal`` (the other arms at the start): with a closed form every
    branch and the answer seeded at the start."""
    model = space.model
    pos, quat, pos_mask, rot_mask = check_pose_goal(model, goal)
    link = model.link_index(goal.link)
    arm = certified_arm(model, link) if pos_mask.all() and rot_mask.all() else None
    if arm is not None:
        q_all, valid = analytic_ik(model, link, pos, quat, q_rest=q_start, arm=arm)
        cand = np.repeat(q_start[None], int(valid.sum()), axis=0)
        cand[:, list(arm.dof_idx)] = q_all[valid]
        seeded = inverse_kinematics(model, link, pos, quat, init_qpos=q_start, max_samples=1, return_info=True,
                                    warn=False)  # the start's own branch, where the closed form's
        # representative of it lies far (near the wrist's singular place): a goal a small step away stays near
        return np.vstack([cand, seeded.q[None]]) if bool(np.all(seeded.converged)) else cand
    rng = np.random.default_rng(seed)
    seeds = np.repeat(q_start[None], tries, axis=0)
    seeds[1:, space.dofs] = rng.uniform(space.lower, space.upper, (tries - 1, space.n_active))
    kwargs = {}
    if not pos_mask.all():
        kwargs["pos_mask"] = tuple(bool(v) for v in pos_mask)
    if not rot_mask.all():
        kwargs["rot_mask"] = tuple(bool(v) for v in rot_mask)
    res = collision_free_ik(model, space.collision, link, np.tile(pos, (tries, 1)), np.tile(quat, (tries, 1)),
                            space.min_distance, init_qpos=seeds, restarts=2, seed=seed, **kwargs)
    return res.q[res.collision_free]


def pose_goals(space: PlanningSpace, goal: PoseGoal | Sequence[PoseGoal], q_start: np.ndarray,
               max_goals: int = 16, tries: int = 8, seed: int = 0) -> GoalSet:
    """Collision-free IK goals for one pose goal or one per arm (combined), valid in ``space``; at most
    ``max_goals``, nearest to the start first. q_start (n_dofs,): the held DOFs' values and the other arms'."""
    goals = [goal] if isinstance(goal, PoseGoal) else list(goal)
    links = [g.link for g in goals]
    if len(set(links)) != len(links):
        raise InputError(f"one pose goal per link, got links {links}")
    chains = [_chain_dofs(space.model, g.link) for g in goals]
    per_arm = [_arm_candidates(space, g, q_start, tries, seed + i) for i, g in enumerate(goals)]
    if any(len(c) == 0 for c in per_arm):
        bad = [g.link for g, c in zip(goals, per_arm) if len(c) == 0]
        return GoalSet(np.zeros((0, space.n_active)), "no_ik_goal", f"no collision-free IK solution for {bad}")
    combos = list(itertools.islice(itertools.product(*[range(len(c)) for c in per_arm]), MAX_COMBOS))
    full = np.repeat(q_start[None], len(combos), axis=0)
    for row, combo in enumerate(combos):
        for arm, k in enumerate(combo):
            full[row, chains[arm]] = per_arm[arm][k, chains[arm]]
    q = space.active(full)
    q = q[space.valid(q)]
    if len(q) == 0:
        return GoalSet(q, "no_ik_goal", f"every IK solution ({len(combos)}) collides or leaves the bounds")
    q = q[np.argsort(np.abs(q - space.active(q_start)).sum(axis=1), kind="stable")]
    keep = [0]
    for i in range(1, len(q)):
        if all(np.abs(q[i] - q[j]).max() > DUPLICATE for j in keep):
            keep.append(i)
    return GoalSet(q[keep[:max_goals]], None)
