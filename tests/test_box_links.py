"""A moving link whose collision shapes are all boxes is measured as its boxes, exactly (app.collision._box_box):
box against box agrees with PyBullet's closest points (never farther), the WidowX AI's box links against each other
and the table agree with PyBullet on random configurations, the clear test and the distances agree, the gradient
rows match finite differences, and collision-free IK among boxes solves what PyBullet finds clear."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pybullet as pb
import pytest
from scipy.spatial.transform import Rotation

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision._box_box import box_box
from app.collision.pairs import sample_configs

ROOT = Path(__file__).resolve().parents[1]
URDF = str(ROOT / "assets" / "urdf" / "widowx_ai.urdf")
TABLE = WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205))
# PyBullet rounds a box's corners and edges by its collision margin: its distance is up to this much larger there
ROUNDING = 1.5e-3


def _pybullet_boxes(cid, half, R, P):
    bodies = []
    for h, r, p in zip(half, R, P):
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(h), physicsClientId=cid)
        bodies.append(pb.createMultiBody(0, shape, -1, list(p), list(Rotation.from_matrix(r).as_quat()),
                                         physicsClientId=cid))
    return bodies


def test_box_against_box_agrees_with_pybullet_and_its_witnesses_lie_on_the_boxes(pb_client):
    rng = np.random.default_rng(1)
    xa, xb, n, w = np.empty(3), np.empty(3), np.empty(3), np.empty(18)
    apart = 0
    for trial in range(300):
        half = rng.uniform(0.005, 0.06, (2, 3))
        R, P = Rotation.random(2, random_state=trial).as_matrix(), rng.uniform(-0.08, 0.08, (2, 3))
        d = box_box(R, P, half, 0, 1, xa, xb, n, w, np.inf)
        a, b = _pybullet_boxes(pb_client, half, R, P)
        reference = min(p[8] for p in pb.getClosestPoints(a, b, 1.0, physicsClientId=pb_client))
        pb.removeBody(a, physicsClientId=pb_client)
        pb.removeBody(b, physicsClientId=pb_client)
        assert reference - ROUNDING <= d <= reference + 1e-6, (trial, d, reference)
        if d > 0:
            apart += 1
            assert np.linalg.norm(xa - xb) == pytest.approx(d, abs=1e-9)
            for x, k in ((xa, 0), (xb, 1)):  # each witness on its own box's surface
                local = np.abs(R[k].T @ (x - P[k]))
                assert np.all(local <= half[k] + 1e-9) and np.any(np.isclose(local, half[k], atol=1e-9))
    assert apart > 100


def test_face_to_face_and_corner_to_corner_distances_are_exact():
    half = np.array([[0.05, 0.05, 0.05], [0.05, 0.05, 0.05]])
    R = np.stack([np.eye(3), np.eye(3)])
    xa, xb, n, w = np.empty(3), np.empty(3), np.empty(3), np.empty(18)
    for offset, expected in (((0.2, 0.0, 0.0), 0.1), ((0.2, 0.13, 0.12), np.sqrt(0.1**2 + 0.03**2 + 0.02**2)),
                             ((0.08, 0.0, 0.0), -0.02)):
        P = np.array([[0.0, 0.0, 0.0], offset])
        assert box_box(R, P, half, 0, 1, xa, xb, n, w, np.inf) == pytest.approx(expected, abs=1e-12)
        assert n @ (P[0] - P[1]) > 0  # the normal points from b towards a


def test_a_separating_axis_beyond_the_wanted_distance_answers_with_a_bound_not_below_it():
    half = np.full((2, 3), 0.02)
    R, P = np.stack([np.eye(3)] * 2), np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    xa, xb, n, w = np.empty(3), np.empty(3), np.empty(3), np.empty(18)
    assert 0.1 <= box_box(R, P, half, 0, 1, xa, xb, n, w, 0.1) <= 0.46 + 1e-12


@pytest.fixture(scope="module")
def widowx_among_boxes():
    model = RobotModel.from_urdf(URDF)
    return model, collision_model(model, World(boxes=(TABLE,)))


def test_the_widowx_box_links_are_measured_as_boxes_and_agree_with_pybullet(widowx_among_boxes, pb_client):
    model, cm = widowx_among_boxes
    assert {"link_4", "link_6"} <= set(cm.robot.boxes) and "link_4" not in cm.robot.spheres
    body = pb.loadURDF(URDF, useFixedBase=True, physicsClientId=pb_client)
    info = [pb.getJointInfo(body, j, physicsClientId=pb_client) for j in range(pb.getNumJoints(body, physicsClientId=pb_client))]
    link_of = {i[12].decode(): i[0] for i in info}
    dof_of = {i[1].decode(): i[0] for i in info}
    table = _pybullet_boxes(pb_client, [TABLE.half], [np.eye(3)], [TABLE.pos])[0]
    pairs = [("link_4", "table"), ("link_6", "table"), ("gripper_left", "table"), ("link_2", "link_4"),
             ("link_3", "link_6")]  # box against box, and link spheres against a box link
    index = [cm.pair_names.index(p) if p in cm.pair_names else cm.pair_names.index(p[::-1]) for p in pairs]
    q = sample_configs(model, 200, seed=5)
    d, _ = cm.distances(q, with_gradient=False)
    compared = 0
    for row, qi in enumerate(q):
        for name, value in zip(model.dof_names, qi):
            pb.resetJointState(body, dof_of[name], value, physicsClientId=pb_client)
        for (a, b), j in zip(pairs, index):
            other, link_b = (table, -1) if b == "table" else (body, link_of[b])
            points = pb.getClosestPoints(body, other, 0.05, link_of[a], link_b, physicsClientId=pb_client)
            if points and b == "table":
                reference = min(p[8] for p in points)
                assert reference - ROUNDING <= d[row, j] <= reference + 1e-5, (row, a, b, d[row, j], reference)
                compared += 1
            elif points:  # a's spheres bulge beyond its mesh: never farther than PyBullet, by at most the excess
                reference = min(p[8] for p in points)
                assert reference - cm.pair_excess[j] - ROUNDING <= d[row, j] <= reference + 1e-5, (row, a, b)
    assert compared > 50


def test_clear_agrees_with_the_distances_on_box_pairs(widowx_among_boxes):
    model, cm = widowx_among_boxes
    q = sample_configs(model, 400, seed=8)
    d, _ = cm.distances(q, with_gradient=False)
    for m in (0.0, 0.01, 0.03):
        assert np.array_equal(cm.clear(q, m), (d >= m).all(axis=1))


def test_box_pair_gradient_rows_match_finite_differences(widowx_among_boxes):
    model, cm = widowx_among_boxes
    j = cm.pair_names.index(("link_6", "table")) if ("link_6", "table") in cm.pair_names else \
        cm.pair_names.index(("table", "link_6"))
    q = sample_configs(model, 300, seed=11)
    d, _ = cm.distances(q, with_gradient=False)
    q = q[(d[:, j] > 0.005) & (d[:, j] < 0.1)][:20]  # apart: the distance is smooth there (almost everywhere)
    _, grad = cm.distances(q)
    h = 1e-6
    for qi, g in zip(q, grad[:, j]):
        fd = np.array([(cm.distances((qi + h * e)[None], with_gradient=False)[0][0, j]
                        - cm.distances((qi - h * e)[None], with_gradient=False)[0][0, j]) / (2 * h)
                       for e in np.eye(len(qi))])
        assert np.allclose(g, fd, atol=1e-4), (g, fd)


def test_collision_free_ik_among_boxes_is_never_falsely_clear_and_solves_what_pybullet_finds_clear():
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_clutter_ik as bench

    model = RobotModel.from_urdf(URDF)
    cm = collision_model(model, World(boxes=bench.BOXES))
    referee = bench.Referee(model, [p for p, kind in zip(cm.pair_names, cm.pair_kinds) if kind == "self"])
    try:
        q_targets = bench.targets(model, referee, 96, seed=21)
        pos, quat = (a[:, 0] for a in model.forward_kinematics(q_targets, [bench.LINK]))
        logging.getLogger("app").setLevel(logging.ERROR)
        res = model.inverse_kinematics(bench.LINK, pos=pos, quat=quat, avoid_collisions=True,
                                       min_distance=bench.MIN_DISTANCE, collision=cm, return_info=True)
        said_clear = res.collision_free & res.converged
        truth = np.array([referee.distances(q) for q in res.q])
        exists = bench.has_clear_branch(model, referee, pos, quat, (model.q_lower + model.q_upper) / 2)
    finally:
        referee.close()
        logging.getLogger("app").setLevel(logging.NOTSET)
    assert not np.any(said_clear & ((truth[:, 0] < bench.MIN_DISTANCE - 1e-3) | (truth[:, 1] < -1e-3)))
    assert exists.sum() > 50 and (said_clear & exists).sum() >= 0.97 * exists.sum()
