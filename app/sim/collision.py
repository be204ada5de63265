"""Closest points between a robot and its surroundings -> distance rows for the QP.

``robot`` below is the scene robot (app.sim.robot.Robot, which calls these for its ``distance_rows``).

PyBullet's ``getClosestPoints(A, B)`` reports the witness points on A and B, the normal on B
pointing from B towards A, and the signed distance. The rows' Jacobians are the robot's point
Jacobians at the witness points (world frame); static bodies contribute zeros.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as pb

from app.collision import CollisionModel
from app.ik.limits.distance import CollisionPairs, DistanceRows, GraspState


def distance_rows(robot, pairs: CollisionPairs, q: np.ndarray, box_ids: dict[str, list[int]],
                  grasp: GraspState | None = None) -> DistanceRows:
    """Rows of every environment at joint positions q (n_envs, n_dofs), grouped by environment
    (``DistanceRows.env``), each environment's closest first and at most ``pairs.max_rows``; the pairs the
    motion's ``grasp`` means to touch are left out."""
    grasp = GraspState.nothing(robot.n_envs) if grasp is None else grasp
    found = []  # rows (see _closest_points)
    for env in range(robot.n_envs):
        env_found = _closest_points(robot, pairs, env, box_ids, grasp)
        env_found.sort(key=lambda row: row[0])
        found += env_found[:pairs.max_rows]
    if not found:
        return DistanceRows.empty(robot.n_dofs)
    rows = np.array([row[:-1] for row in found])
    env, link_a, link_b = rows[:, 1].astype(np.int64), rows[:, 2].astype(np.int64), rows[:, 3].astype(np.int64)
    moving_b = link_b >= 0  # both sides' witness points in one FK and Jacobian call
    if moving_b.any():
        J = _witness_jacobians(robot, q, np.concatenate([env, env[moving_b]]),
                               np.concatenate([link_a, link_b[moving_b]]),
                               np.concatenate([rows[:, 7:10], rows[moving_b, 10:13]]))
    else:  # only static bodies (a table, boxes): side a's points alone
        J = _witness_jacobians(robot, q, env, link_a, rows[:, 7:10])
    J_a, J_b = J[:len(found)], np.zeros((len(found),) + J.shape[1:])
    J_b[moving_b] = J[len(found):]
    others = [row[-1] for row in found]
    return DistanceRows(rows[:, 0], rows[:, 4:7], J_a, J_b, PairLabels(robot.model.link_names, link_a, others), env)


class PairLabels(Sequence):
    """'link|other' names of distance rows, formatted only when read (most ticks read none)."""

    def __init__(self, link_names: Sequence[str], link_a: np.ndarray, others: list[str]):
        self._names, self._links, self._others = link_names, link_a, others

    def __len__(self) -> int:
        return len(self._others)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        return f"{self._names[self._links[k]]}|{self._others[k]}"


def _closest_points(robot, pairs: CollisionPairs, env: int, box_ids: dict[str, list[int]], grasp: GraspState) -> list:
    """PyBullet's closest points of one environment's watched pairs as rows (distance, env, link_a,
    link_b or -1 for a static body, normal (3), point on a (3), point on b (3), name of b).

    A point of a link that no joint moves is dropped: a base standing on the table cannot change that
    distance, and a row without a gradient would only make the QP infeasible.
    """
    client, body = robot.client, robot.bodies[env]
    to_model, movable = robot.pb_to_model_link, robot.movable_pb_links
    released, skipped_pairs = grasp.released[env], grasp.released_pairs[env]
    fingers = frozenset().union(*(g.pb_links for g in robot.grippers.values()))
    found = []
    for name in pairs.obstacles:
        skip = fingers if name in released else frozenset()  # a held object: the fingers are meant to touch it
        found += [(pt[8], env, to_model[pt[3]], -1) + pt[7] + pt[5] + pt[6] + (name,)
                  for pt in pb.getClosestPoints(body.body_id, box_ids[name][env], pairs.detection_distance,
                                                physicsClientId=client) if pt[3] in movable and pt[3] not in skip]
    for a, b in pairs.self_pairs:
        if (a, b) in skipped_pairs:  # e.g. two grippers' fingers while they hand an object over
            continue
        ia, ib = body.link_index[a], body.link_index[b]
        found += [(pt[8], env, to_model[ia], to_model[ib]) + pt[7] + pt[5] + pt[6] + (b,)
                  for pt in pb.getClosestPoints(body.body_id, body.body_id, pairs.detection_distance, ia, ib,
                                                physicsClientId=client)]
    return found


def _witness_jacobians(robot, q: np.ndarray, env: np.ndarray, links: np.ndarray,
                       points: np.ndarray) -> np.ndarray:
    """Linear world-frame Jacobians of world points (K, 3) on links (K,) of environments env (K,), from
    q (n_envs, n_dofs): one FK and one Jacobian call for all of them. Shape (K, 3, n_dofs)."""
    R_wb, origins = robot.world_base_frames()
    R, p = robot.model.link_frames(q)
    base_points = (points - origins[env]) @ R_wb
    J = robot.model.point_jacobians(R, p, links, base_points, env)[:, :3]
    return np.einsum("ij,kjn->kin", R_wb, J)


def min_distance(robot, box_ids: Sequence[int], env: int, max_distance: float = 1.0,
                 movable_only: bool = False) -> float:
    """Smallest signed distance [m] between the robot of ``env`` and the given bodies (inf if none within).

    ``movable_only`` ignores links no joint moves (a base standing on the table touches it).
    """
    client = robot.client
    body = robot.bodies[env]
    d = [pt[8] for bid in box_ids
         for pt in pb.getClosestPoints(body.body_id, bid, max_distance, physicsClientId=client)
         if not movable_only or pt[3] in robot.movable_pb_links]
    return min(d) if d else float("inf")


def referee_pairs(collision: CollisionModel, detection_distance: float = 0.05) -> CollisionPairs:
    """The pairs a sphere collision model watches, for PyBullet to measure on the real geometry (the referee of
    sphere rows): its world boxes against every link, and its robot link pairs."""
    boxes = tuple(b.name for b in collision.world.boxes)
    held = () if collision.world.held is None else (collision.world.held.name,)
    self_pairs = tuple(p for p in collision.pair_names if not set(p) & set(boxes + held))
    return CollisionPairs(boxes, self_pairs, detection_distance, max_rows=10_000)
