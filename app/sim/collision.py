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

from app.ik.limits import DistanceRow
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


def _point_jacobian(robot: Robot, q: np.ndarray, link: int, point_world: np.ndarray, env: int) -> np.ndarray:
    """Linear Jacobian (3, n_dofs), world frame, of a world point rigidly attached to a model link."""
    R_wb, origins = robot.base_frames()
    R, p = robot.model.link_frames(q)
    local = R[link].T @ (R_wb.T @ (point_world - origins[env]) - p[link])
    J = robot.model.jacobian_from_frames(R, p, link, local)
    return R_wb @ J[:3]


def distance_rows(robot: Robot, pairs: CollisionPairs, q: np.ndarray, env: int,
                  box_ids: dict[str, list[int]]) -> list[DistanceRow]:
    """Rows for environment ``env`` at joint positions q (n_dofs,), closest first, at most max_rows."""
    client = robot.scene.client
    body = robot.bodies[env]
    pb_to_model = {pb_idx: robot.model.link_index(name) for name, pb_idx in body.link_index.items()}
    movable = robot.model.jacobian_tables[3].any(axis=1)  # links some DOF moves
    found: list[tuple[float, DistanceRow]] = []
    for name in pairs.obstacles:
        for pt in pb.getClosestPoints(body.body_id, box_ids[name][env], pairs.detection_distance,
                                      physicsClientId=client):
            link = pb_to_model[pt[3]]
            if not movable[link]:  # the base resting on the table: no motion can change it
                continue
            J_a = _point_jacobian(robot, q, link, np.array(pt[5]), env)
            found.append((pt[8], DistanceRow(pt[8], np.array(pt[7]), J_a, np.zeros_like(J_a),
                                             f"{robot.model.link_names[link]}|{name}")))
    for a, b in pairs.self_pairs:
        ia, ib = body.link_index[a], body.link_index[b]
        for pt in pb.getClosestPoints(body.body_id, body.body_id, pairs.detection_distance, ia, ib,
                                      physicsClientId=client):
            J_a = _point_jacobian(robot, q, pb_to_model[ia], np.array(pt[5]), env)
            J_b = _point_jacobian(robot, q, pb_to_model[ib], np.array(pt[6]), env)
            found.append((pt[8], DistanceRow(pt[8], np.array(pt[7]), J_a, J_b, f"{a}|{b}")))
    found.sort(key=lambda item: item[0])
    return [row for _, row in found[:pairs.max_rows]]


def min_distance(robot: Robot, box_ids: Sequence[int], env: int, max_distance: float = 1.0,
                 movable_only: bool = False) -> float:
    """Smallest signed distance [m] between the robot of ``env`` and the given bodies (inf if none within).

    ``movable_only`` ignores links no joint moves (a base standing on the table touches it).
    """
    client = robot.scene.client
    body = robot.bodies[env]
    movable = robot.model.jacobian_tables[3].any(axis=1)
    pb_to_model = {pb_idx: robot.model.link_index(name) for name, pb_idx in body.link_index.items()}
    d = [pt[8] for bid in box_ids
         for pt in pb.getClosestPoints(body.body_id, bid, max_distance, physicsClientId=client)
         if not movable_only or movable[pb_to_model[pt[3]]]]
    return min(d) if d else float("inf")
