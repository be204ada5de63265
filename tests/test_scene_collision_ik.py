"""The scene robot's inverse_kinematics(..., avoid_collisions=True): its World is the scene's table and boxes
(moved into the base frame, a rotated and shifted base included); answers are clear by PyBullet's own measure,
and a target inside a box is reported as not collision-free, never flagged clear."""

import numpy as np
import pytest

from app.errors import InputError
from app.sim.collision import min_distance
from app.sim.scene import BoxSpec, Scene
from tests.conftest import WIDOWX_URDF

EE = "ee_gripper_link"
Q_FREE = np.array([0.3, 1.0, 0.8, -0.4, 0.2, 0.1, 0.02, 0.02])
Q_IN = np.array([-0.5, 1.2, 0.9, -0.5, 0.0, 0.0, 0.02, 0.02])


@pytest.fixture(scope="module")
def scene_robot():
    """Two environments; the base turned 90 deg about z and lifted; a block around the gripper of Q_IN."""
    scene = Scene()
    base_quat = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))
    robot = scene.add_robot(str(WIDOWX_URDF), base_pos=(0.0, 0.0, 0.02), base_quat=base_quat)
    pos_in, _ = _pose(robot, Q_IN)
    scene.add_box(BoxSpec("table", (0.8, 0.8, 0.04), (0.0, 0.3, -0.0005)))
    scene.add_box(BoxSpec("block", (0.1, 0.1, 0.1), tuple(pos_in)))
    scene.build(n_envs=2, env_spacing=(1.5, 1.5))
    yield scene, robot
    scene.close()


def _pose(robot, q):
    """The gripper's pose in the environment frame at q (before build: from the model and the base pose)."""
    pos, quat = robot.model.forward_kinematics(q[None], [EE])
    pos, quat = robot.base.poses_from_base(pos, quat)
    return pos[0, 0], quat[0, 0]


def test_answers_are_clear_of_the_scene_boxes_by_pybullets_measure(scene_robot):
    scene, robot = scene_robot
    pos, quat = _pose(robot, Q_FREE)
    res = robot.inverse_kinematics(EE, np.tile(pos, (2, 1)), np.tile(quat, (2, 1)), avoid_collisions=True,
                                   min_distance=0.005, return_info=True)
    assert res.collision_free.all() and res.q.shape == (2, robot.n_dofs)
    robot.set_qpos(res.q)
    ids = [scene.box_ids["table"], scene.box_ids["block"]]
    for env in range(2):
        assert min_distance(robot, [i[env] for i in ids], env, movable_only=True) >= 0.005 - 1e-6
        got_pos, _ = _pose(robot, res.q[env])
        np.testing.assert_allclose(got_pos, pos, atol=1e-3)


def test_a_target_inside_a_box_is_reported_not_collision_free(scene_robot):
    _, robot = scene_robot
    pos, quat = _pose(robot, Q_IN)
    res = robot.inverse_kinematics(EE, pos, quat, avoid_collisions=True, min_distance=0.0, return_info=True,
                                   envs_idx=[1])
    assert not res.collision_free.any() and res.converged.all()
    assert "block" in res.closest[0][:2] and res.closest[0][2] < 0


def test_collision_must_be_a_collision_model(scene_robot):
    _, robot = scene_robot
    pos, quat = _pose(robot, Q_FREE)
    with pytest.raises(InputError, match="CollisionModel"):
        robot.inverse_kinematics(EE, pos, quat, avoid_collisions=True, collision="table", envs_idx=[0])
