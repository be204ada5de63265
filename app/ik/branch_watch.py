"""Where a path of IK answers leaves its branch, and why: the callers that turn a path of poses into joints (a
Cartesian path of the driver, a planner's goals, benchmarks) check consecutive answers with :func:`first_leave` and say
the waypoint and the cause instead of jumping silently.

A *leave* is a step above JUMP in an arm joint between two consecutive answers, and above RATIO times the poses' own
step where the caller gives it (a fast move's samples may be far apart: its joints then step as far as its poses do,
on their branch). Its cause, judged at the answer before
it: ``unreachable`` (the next pose has no solution), ``wrist_singularity`` or ``arm_singularity`` (the arm Jacobian's
smallest singular value below SINGULAR; wrist when the motion it loses is mostly the last three arm joints', else the
arm's: the elbow stretched at the workspace's boundary, the wrist centre on the base axis), ``joint_limit`` (an arm
joint within LIMIT_MARGIN of a limit), else ``other``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.kinematics.model import KinematicModel, LinkRef

JUMP = 0.2  # [rad]: a step between consecutive answers above this leaves the branch
SINGULAR = 0.01  # smallest singular value of the arm Jacobian (rows [m] and [rad] per rad) that counts as singular
LIMIT_MARGIN = 0.05  # [rad]
RATIO = 10.0  # a leave's joint step is above this many times its pose step
REACH_SCALE = 0.1  # [m]: a pose step's translation counts as this many radians per 0.1 m (pose_steps)


class BranchLeave(NamedTuple):
    """index: the waypoint whose answer left (its step from index - 1); jump [rad]: the largest arm joint step;
    cause: see the module."""

    index: int
    jump: float
    cause: str


def leave_cause(model: KinematicModel, link: LinkRef, q_prev: np.ndarray, arm_dofs: np.ndarray) -> str:
    """The cause of a leave after the answer q_prev (n_dofs,) on the arm DOFs ``arm_dofs`` (the module's words, but
    ``unreachable``, which only the caller knows)."""
    q_prev = np.asarray(q_prev, dtype=float)
    J = model.get_jacobian(q_prev, link)[:, arm_dofs]
    _, sigma, vt = np.linalg.svd(J)
    if sigma[-1] < SINGULAR:
        lost = vt[-1] ** 2
        return "wrist_singularity" if lost[-3:].sum() > 0.5 else "arm_singularity"
    gap = np.minimum(q_prev - model.q_lower, model.q_upper - q_prev)[arm_dofs]
    return "joint_limit" if np.any(gap < LIMIT_MARGIN) else "other"


def pose_steps(pos: np.ndarray, R: np.ndarray) -> np.ndarray:
    """(T,) each pose's step from the one before (0 for the first): translation / REACH_SCALE [rad per 0.1 m] plus the
    rotation angle [rad]; pos (T, 3) [m], R (T, 3, 3)."""
    out = np.zeros(len(pos))
    if len(pos) > 1:
        rel = np.einsum("tji,tjk->tik", R[:-1], R[1:])
        angle = np.arccos(np.clip((np.trace(rel, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
        out[1:] = np.linalg.norm(np.diff(pos, axis=0), axis=1) / REACH_SCALE + angle
    return out


def first_leave(model: KinematicModel, link: LinkRef, q: np.ndarray, arm_dofs: np.ndarray,
                solved: np.ndarray | None = None, steps: np.ndarray | None = None) -> BranchLeave | None:
    """The first leave along answers q (T, n_dofs) (``solved`` (T,): False where a waypoint has no answer, its row
    then ignored and the leave ``unreachable``; ``steps`` (T,): the poses' own steps, :func:`pose_steps`), or None
    where the path stays on its branch."""
    q = np.asarray(q, dtype=float)
    ok = np.ones(len(q), dtype=bool) if solved is None else np.asarray(solved, dtype=bool)
    allowed = np.full(len(q), JUMP) if steps is None else np.maximum(JUMP, RATIO * np.asarray(steps, dtype=float))
    last = None
    for k in range(len(q)):
        if not ok[k]:
            return BranchLeave(k, float("nan"), "unreachable")
        if last is not None:
            step = float(np.abs(q[k, arm_dofs] - q[last, arm_dofs]).max())
            if step > allowed[k]:
                return BranchLeave(k, step, leave_cause(model, link, q[last], arm_dofs))
        last = k
    return None
