"""Grasp choice by batched IK: candidate grasps of an upright object, ranked for every environment with one
IK call over every candidate's poses (pre-grasp, grasp, lift, above the place, place).

A candidate is a closing direction about the vertical (a box: its four faces; a round object: evenly
spaced yaws), a grasp depth (how far below the object's top the end-effector point goes) and a tilt of
the approach away from the vertical, about the closing direction. Frames: every pose here is in the
environment's frame; the IK works in the robot's base frame (``BaseFrame``).

Score of a reachable candidate (higher is better): the smallest normalised joint-limit margin over its
poses (0..0.5) + 0.25 x its manipulability at the grasp relative to the best candidate's - 0.05 x the
joint distance [rad] from the current configuration to its pre-grasp solution - 0.1 x |tilt| [rad].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.collision.checker import CollisionModel
from app.ik.prepared import PoseIK
from app.ik.solver import IKOptions
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import axis_vector, matrix_to_quat, quat_to_matrix

POSES = ("pre_grasp", "grasp", "lift", "above_place", "place")
WIDTH_MARGIN = 0.004  # [m]: an object must be this much narrower than the open fingers' gap
RANK_OPTIONS = IKOptions(pos_tol=5e-4, rot_tol=5e-3, max_iters=20, max_restarts=0, warn=False)


class GraspGeometry(NamedTuple):
    """What the candidates need. half (3,): the object's half extents [m]; round: a cylinder or sphere (any
    yaw) rather than a box (four faces); depths: fractions of the object's height below its top;
    tilts [rad]; n_yaws: closing directions of a round object; approach/lift heights [m]; clearance [m]:
    the end-effector point stays this far above the object's bottom; place_drop [m]: the place pose
    leaves the object this far above its resting height."""

    half: np.ndarray
    round: bool
    depths: tuple[float, ...] = (0.7, 0.5)
    tilts: tuple[float, ...] = (0.0, 0.3, -0.3)
    n_yaws: int = 8
    approach_height: float = 0.05
    lift_height: float = 0.05
    clearance: float = 0.01
    place_drop: float = 0.003


class GraspPlan(NamedTuple):
    """Per environment (n_envs,): ``ok``; ``reason`` '' or 'ungraspable' / 'unreachable' / 'collision'; the chosen
    candidate's ``yaw_offset`` (closing direction relative to the object's yaw) [rad], ``depth`` [m] below
    the top, ``tilt`` [rad], ``width`` [m] across the fingers, ``score``; ``q`` (n_envs, 5, n_dofs): its IK
    solutions at POSES; ``n_candidates`` and how many were reachable (n_envs,)."""

    ok: np.ndarray
    reason: list[str]
    yaw_offset: np.ndarray
    depth: np.ndarray
    tilt: np.ndarray
    width: np.ndarray
    score: np.ndarray
    q: np.ndarray
    n_candidates: int
    n_reachable: np.ndarray


def grasp_rotation(approach_world: np.ndarray, closing_world: np.ndarray, approach_axis: str,
                   closing_axis: str) -> np.ndarray:
    """End-effector rotations (..., 3, 3) that point ``approach_axis`` along approach_world (..., 3) and
    ``closing_axis`` along closing_world (..., 3) (orthonormal to it)."""
    a_e, c_e = axis_vector(approach_axis), axis_vector(closing_axis)
    E = np.stack([a_e, c_e, np.cross(a_e, c_e)], axis=1)  # columns in the end-effector frame
    W = np.stack([approach_world, closing_world, np.cross(approach_world, closing_world)], axis=-1)
    return W @ E.T


def candidates(geo: GraspGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(yaw_offset, depth_fraction, tilt, width) per candidate, each (C,)."""
    if geo.round:
        yaws = np.arange(geo.n_yaws) * (2 * np.pi / geo.n_yaws)
        widths = np.full(len(yaws), 2 * geo.half[0])
    else:  # close along the object's x, y, -x, -y
        yaws = np.arange(4) * (np.pi / 2)
        widths = 2 * geo.half[[0, 1, 0, 1]]
    grid = np.array(np.meshgrid(np.arange(len(yaws)), geo.depths, geo.tilts, indexing="ij")).reshape(3, -1)
    k = grid[0].astype(int)
    return yaws[k], grid[1], grid[2], widths[k]


def object_yaw(quat: np.ndarray) -> np.ndarray:
    """Yaw [rad] of the objects' x axes about the vertical, from quat (n, 4) wxyz."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=float), -1, 0)
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def grasp_poses(geo: GraspGeometry, obj_pos: np.ndarray, yaw: np.ndarray, depth: np.ndarray, tilt: np.ndarray,
                place_pos: np.ndarray, approach_axis: str, closing_axis: str) -> tuple[np.ndarray, np.ndarray]:
    """Poses at POSES for grasps: obj_pos, place_pos (..., 3) [m] (object centres, environment frame), yaw of
    the closing direction, depth fraction and tilt (...,) -> pos (..., 5, 3), rot (..., 5, 3, 3)."""
    d = np.stack([np.cos(yaw), np.sin(yaw), np.zeros_like(yaw)], axis=-1)  # closing direction
    down = np.broadcast_to([0.0, 0.0, -1.0], d.shape)
    perp = np.cross(d, down)  # tilt the approach about d
    a = np.cos(tilt)[..., None] * down + np.sin(tilt)[..., None] * perp
    R = grasp_rotation(a, d, approach_axis, closing_axis)
    h = geo.half[2]
    z = np.maximum(h - depth * 2 * h, -h + geo.clearance)  # the end-effector point below the centre
    grasp = obj_pos + np.stack([np.zeros_like(z), np.zeros_like(z), z], axis=-1)
    up = np.array([0.0, 0.0, 1.0])
    place = grasp - obj_pos + place_pos + geo.place_drop * up
    pos = np.stack([grasp - geo.approach_height * a, grasp, grasp + geo.lift_height * up,
                    place + geo.lift_height * up, place], axis=-2)
    return pos, np.broadcast_to(R[..., None, :, :], pos.shape[:-1] + (3, 3))


def rank_grasps(model, ee_link: str, base: BaseFrame, geo: GraspGeometry, obj_pos: np.ndarray,
                obj_quat: np.ndarray, place_pos: np.ndarray, q_now: np.ndarray, max_opening: float,
                approach_axis: str, closing_axis: str, arm_dofs: np.ndarray | None = None,
                solver: PoseIK | None = None, collision: CollisionModel | None = None,
                min_distance: float = 0.0, prefer: str = "score") -> GraspPlan:
    """Rank every candidate of every environment in one batched IK call. obj_pos, place_pos (n_envs, 3),
    obj_quat (n_envs, 4) wxyz, q_now (n_envs, n_dofs); max_opening: the open fingers' gap [m]; arm_dofs:
    the DOFs judged for margins and distance (default all; a gripper's fingers are not the arm's).
    ``collision``: a candidate whose solution at any pose brings a checked pair (the table, boxes, the arm
    itself; not the object) closer than ``min_distance`` [m] by the spheres is rejected (reason 'collision'
    where every reachable candidate was). ``prefer``: "score" (the module docstring's), or "least_turn": the
    usable candidate whose closing direction is nearest the gripper's now (modulo a half turn), the score among
    equals (a symmetric object's equivalent grasps chosen as a continuous function of its yaw)."""
    yaw_off, depth, tilt, width = candidates(geo)
    n_envs, C = len(obj_pos), len(yaw_off)
    yaw = object_yaw(obj_quat)[:, None] + yaw_off[None]
    pos, rot = grasp_poses(geo, obj_pos[:, None], yaw, np.broadcast_to(depth, yaw.shape),
                           np.broadcast_to(tilt, yaw.shape), place_pos[:, None], approach_axis, closing_axis)
    p_b, R_b = base.targets_to_base(pos.reshape(-1, 3), None)[0], base.rotations_to_base(rot.reshape(-1, 3, 3))
    solver = solver or PoseIK(model, ee_link, options=RANK_OPTIONS)
    q0 = np.repeat(q_now, C * len(POSES), axis=0)
    res = solver.solve(p_b, matrix_to_quat(R_b), init_qpos=q0)
    q = res.q.reshape(n_envs, C, len(POSES), -1)
    reach = res.converged.reshape(n_envs, C, len(POSES)).all(axis=2)
    fits = width < max_opening - WIDTH_MARGIN
    clear = np.ones_like(reach) if collision is None else \
        collision.clear(res.q, min_distance).reshape(n_envs, C, len(POSES)).all(axis=2)
    arm = np.arange(model.n_dofs) if arm_dofs is None else np.asarray(arm_dofs)
    usable = reach & fits[None] & clear
    score = _scores(model, ee_link, q, q_now, tilt, arm) - np.where(usable, 0.0, np.inf)
    if prefer == "least_turn":
        closing = axis_vector(closing_axis)
        turn = _closing_turn(model, ee_link, q_now, R_b.reshape(n_envs, C, len(POSES), 3, 3)[:, :, 1] @ closing,
                             closing)
        score = score - TURN_WEIGHT * np.round(turn, 3)
    best = np.argmax(score, axis=1)
    ok = np.isfinite(score[np.arange(n_envs), best])
    reason = ["" if o else "ungraspable" if not fits.any() else "collision" if (reach[e] & fits).any()
              else "unreachable" for e, o in enumerate(ok)]
    pick = lambda a: a[best]  # noqa: E731
    return GraspPlan(ok, reason, pick(yaw_off), pick(depth) * 2 * geo.half[2], pick(tilt), pick(width),
                     np.where(ok, score[np.arange(n_envs), best], -np.inf), q[np.arange(n_envs), best], C,
                     usable.sum(axis=1))


TURN_WEIGHT = 1e4  # "least_turn": a closing direction 1 mrad nearer outweighs any score difference (< 1)


def _closing_turn(model, ee_link: str, q_now: np.ndarray, d_cand: np.ndarray, closing: np.ndarray) -> np.ndarray:
    """|angle| [rad] about the vertical, modulo a half turn, from the gripper's closing direction at q_now
    (n_envs, n_dofs) to each candidate's d_cand (n_envs, C, 3), both in the base frame -> (n_envs, C)."""
    d_now = quat_to_matrix(model.forward_kinematics(q_now, [ee_link])[1][:, 0]) @ closing  # (n_envs, 3)
    a = np.arctan2(d_cand[..., 1], d_cand[..., 0]) - np.arctan2(d_now[:, 1], d_now[:, 0])[:, None]
    return np.abs(a - np.pi * np.round(a / np.pi))


def _scores(model, ee_link: str, q: np.ndarray, q_now: np.ndarray, tilt: np.ndarray, arm: np.ndarray) -> np.ndarray:
    """The module docstring's score of every candidate, q (n_envs, C, 5, n_dofs) -> (n_envs, C)."""
    J = model.get_jacobian(q[:, :, 1], ee_link)[..., arm]  # (n_envs, C, 6, n_arm)
    q, q_now = q[..., arm], q_now[:, arm]
    lo, hi = model.q_lower[arm], model.q_upper[arm]
    finite = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    span = np.where(finite, hi - lo, 1.0)
    margin = np.where(finite, np.minimum(q - lo, hi - q) / span, 0.5).min(axis=(2, 3))
    manip = np.sqrt(np.abs(np.linalg.det(J @ np.swapaxes(J, -1, -2))))
    rel = manip / np.maximum(manip.max(axis=1, keepdims=True), 1e-12)
    dist = np.linalg.norm(q[:, :, 0] - q_now[:, None], axis=-1)
    return margin + 0.25 * rel - 0.05 * dist - 0.1 * np.abs(tilt)[None]
