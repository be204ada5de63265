"""Distance rows from PyBullet's closest points: grouping per environment and witness-point Jacobians."""

import numpy as np
import pybullet as pb
import pytest

from app.sim.collision import CollisionPairs, distance_rows
from app.sim.scene import BoxSpec, Scene
from tests.conftest import WIDOWX_URDF


@pytest.fixture(scope="module")
def two_envs():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    scene.add_box(BoxSpec("table", (0.8, 0.8, 0.04), (0.3, 0.0, -0.0205)))
    scene.add_box(BoxSpec("post", (0.05, 0.05, 0.4), (0.25, 0.12, 0.2)))
    scene.build(n_envs=2, env_spacing=(1.5, 1.5))
    q = np.stack([robot.model.mid_config(), robot.model.mid_config()])
    q[1, :4] = [0.4, 1.2, 0.9, -0.6]  # env 1 reaches towards the post and down to the table
    robot.set_qpos(q)
    yield scene, robot, q
    scene.close()


def _pybullet_point_jacobian(robot, env, link, world_point):
    """PyBullet's linear world Jacobian (3, n_dofs) of a world point fixed on ``link`` at the current state.

    (calculateJacobian, not finite differences: PyBullet keeps joint positions in single precision.)
    """
    body, client = robot.bodies[env], robot.client
    pb_link = body.link_index[robot.model.link_names[link]]
    pos, orn = pb.getLinkState(body.body_id, pb_link, computeForwardKinematics=True, physicsClientId=client)[4:6]
    local = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3).T @ (world_point - np.array(pos))
    joint_order = sorted(body.joint_index, key=body.joint_index.get)
    q_pb = [s[0] for s in pb.getJointStates(body.body_id, [body.joint_index[n] for n in joint_order],
                                            physicsClientId=client)]
    zeros = [0.0] * len(q_pb)
    lin, _ = pb.calculateJacobian(body.body_id, pb_link, local.tolist(), q_pb, zeros, zeros, physicsClientId=client)
    return np.array(lin)[:, [joint_order.index(n) for n in robot.model.dof_names]]


def test_rows_are_grouped_by_environment_closest_first_and_capped(two_envs):
    scene, robot, q = two_envs
    pairs = CollisionPairs(obstacles=("table", "post"), max_rows=6)
    rows = distance_rows(robot, pairs, q, scene.box_ids)
    assert np.all(np.diff(rows.env) >= 0) and set(rows.env.tolist()) == {0, 1}
    for env in (0, 1):
        d = rows.distance[rows.env == env]
        assert 0 < len(d) <= 6 and np.all(np.diff(d) >= 0)
    assert rows.distance[rows.env == 1].min() < rows.distance[rows.env == 0].min()  # env 1 leans closer
    assert all(label.endswith(("|table", "|post")) for label in rows.labels)
    np.testing.assert_allclose(np.linalg.norm(rows.normal, axis=1), 1.0, atol=1e-6)
    assert not rows.J_b.any()  # static obstacles contribute no motion


def test_witness_jacobians_match_pybullet_jacobians(two_envs):
    scene, robot, q = two_envs
    pairs = CollisionPairs(obstacles=("table", "post"), max_rows=4)
    rows = distance_rows(robot, pairs, q, scene.box_ids)
    client = robot.client
    for k in range(len(rows)):
        env = int(rows.env[k])
        # the witness point on the robot, recomputed from PyBullet for this row's pair
        body = robot.bodies[env].body_id
        name = rows.labels[k].split("|")
        points = pb.getClosestPoints(body, scene.box_ids[name[1]][env], pairs.detection_distance,
                                     linkIndexA=robot.bodies[env].link_index[name[0]], physicsClientId=client)
        best = min(points, key=lambda pt: pt[8])
        assert best[8] == pytest.approx(rows.distance[k], abs=1e-9)
        link = robot.model.link_index(name[0])
        np.testing.assert_allclose(rows.J_a[k], _pybullet_point_jacobian(robot, env, link, np.array(best[5])),
                                   atol=1e-6)  # PyBullet stores joint positions in single precision


def test_self_pairs_give_moving_witness_points_on_both_links(two_envs):
    scene, robot, q = two_envs
    pairs = CollisionPairs(self_pairs=(("link_5", "link_2"),), detection_distance=1.0)
    rows = distance_rows(robot, pairs, q, scene.box_ids)
    assert len(rows) >= 2 and rows.J_b.any()
    for k in range(len(rows)):
        assert rows.labels[k] == "link_5|link_2"
