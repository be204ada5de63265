"""Closest points between a robot and its surroundings -> distance rows for the QP.

PyBullet's ``getClosestPoints(A, B)`` reports the witness points on A and B, the normal on B
pointing from B towards A, and the signed distance. The rows' Jacobians are the robot's point
Jacobians at the witness points (world frame); static bodies contribute zeros.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pybullet as pb

from app.ik.limits import DistanceRows
from app.sim.robot import Robot


@dataclass(frozen=True)
class CollisionPairs:
    """Which pairs to watch for one robot.

    Attributes:
        obstacles: Names of static boxes (scene.box_ids keys) checked against every robot link.
        self_pairs: (link_a, link_b) names of non-adjacent robot links to keep apart.
        detection_distance: Pairs farther than this [m] produce no row.
        max_rows: At most this many rows per environment (closest first).
    """

    obstacles: tuple[str, ...] = ()
    self_pairs: tuple[tuple[str, str], ...] = ()
    detection_distance: float = 0.15
    max_rows: int = 10


def distance_rows(robot: Robot, pairs: CollisionPairs, q: np.ndarray, env: int,
                  box_ids: dict[str, list[int]]) -> DistanceRows:
    """Rows for environment ``env`` at joint positions q (n_dofs,), closest first, at most max_rows."""
    client = robot.scene.client
    body = robot.bodies[env]
    to_model = robot.pb_to_model_link
    movable = robot.model.movable_links
    found = []  # (distance, normal, (link_a, point_a), (link_b, point_b) or None, label)
    for name in pairs.obstacles:
        for pt in pb.getClosestPoints(body.body_id, box_ids[name][env], pairs.detection_distance,
                                      physicsClientId=client):
            link = to_model[pt[3]]
            if movable[link]:  # a base standing on the table: no motion can change that distance
                found.append((pt[8], pt[7], (link, pt[5]), None, f"{robot.model.link_names[link]}|{name}"))
    for a, b in pairs.self_pairs:
        ia, ib = body.link_index[a], body.link_index[b]
        for pt in pb.getClosestPoints(body.body_id, body.body_id, pairs.detection_distance, ia, ib,
                                      physicsClientId=client):
            found.append((pt[8], pt[7], (to_model[ia], pt[5]), (to_model[ib], pt[6]), f"{a}|{b}"))
    found.sort(key=lambda item: item[0])
    found = found[:pairs.max_rows]
    if not found:
        return DistanceRows.empty(robot.n_dofs)
    J = _witness_jacobians(robot, q, env, found)
    K = len(found)
    static_b = np.array([item[3] is None for item in found])
    J_b = np.where(static_b[:, None, None], 0.0, J[K:])
    return DistanceRows(np.array([item[0] for item in found]), np.array([item[1] for item in found]), J[:K], J_b,
                        tuple(item[4] for item in found))


def _witness_jacobians(robot: Robot, q: np.ndarray, env: int, found: list) -> np.ndarray:
    """Linear world-frame Jacobians (3, n_dofs) of the witness points on A, then on B (zeros if static)."""
    R_wb, origins = robot.base_frames()
    R, p = robot.model.link_frames(q)
    links, points = [], []
    for side in (2, 3):
        for item in found:
            link, point = item[side] if item[side] is not None else (0, origins[env])
            links.append(link)
            points.append(point)
    base_points = (np.array(points) - origins[env]) @ R_wb
    J = robot.model.point_jacobians(R, p, np.array(links), base_points)[:, :3]
    return np.einsum("ij,kjn->kin", R_wb, J)


def min_distance(robot: Robot, box_ids: Sequence[int], env: int, max_distance: float = 1.0,
                 movable_only: bool = False) -> float:
    """Smallest signed distance [m] between the robot of ``env`` and the given bodies (inf if none within).

    ``movable_only`` ignores links no joint moves (a base standing on the table touches it).
    """
    client = robot.scene.client
    body = robot.bodies[env]
    movable = robot.model.movable_links
    d = [pt[8] for bid in box_ids
         for pt in pb.getClosestPoints(body.body_id, bid, max_distance, physicsClientId=client)
         if not movable_only or movable[robot.pb_to_model_link[pt[3]]]]
    return min(d) if d else float("inf")
