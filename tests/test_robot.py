"""The scene robot: FK, Jacobian and IK in each environment's own frame, with a rotated, offset base."""

import numpy as np
import pybullet as pb
import pytest

from app import AppError, InputError
from app.kinematics.rotations import quat_to_matrix, xyzw_to_wxyz
from app.sim.scene import Scene
from tests.conftest import WIDOWX_URDF, random_configs

EE = "ee_gripper_link"
BASE_QUAT = [np.cos(0.4), 0.0, 0.0, np.sin(0.4)]  # 0.8 rad about z


@pytest.fixture()
def scene2():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF), base_pos=[0.1, -0.2, 0.05], base_quat=BASE_QUAT)
    scene.build(n_envs=2, env_spacing=(1.5, 1.0))
    yield scene, robot
    scene.close()


def test_fk_in_each_env_frame_matches_pybullet_minus_the_env_origin(scene2):
    scene, robot = scene2
    q = random_configs(robot.model, 2, seed=40)
    robot.set_qpos(q)
    idx = robot.get_link(EE).idx
    pos, quat = robot.forward_kinematics(robot.get_qpos(), links_idx_local=[idx])
    for env, body in enumerate(robot.bodies):
        state = pb.getLinkState(body.body_id, body.link_index[EE], computeForwardKinematics=True,
                                physicsClientId=scene.client)
        np.testing.assert_allclose(pos[env, 0], np.array(state[4]) - scene.env_origins[env], atol=1e-6)
        np.testing.assert_allclose(quat_to_matrix(quat[env, 0]), quat_to_matrix(xyzw_to_wxyz(state[5])), atol=1e-6)


def test_jacobian_matches_finite_differences_of_fk(scene2):
    _, robot = scene2
    q = random_configs(robot.model, 2, seed=41)
    robot.set_qpos(q)
    J = robot.get_jacobian(robot.get_link(EE))
    idx = robot.get_link(EE).idx
    h = 1e-6
    for k in range(robot.n_dofs):
        dq = np.zeros_like(q)
        dq[:, k] = h
        p_plus = robot.forward_kinematics(q + dq, links_idx_local=[idx])[0][:, 0]
        p_minus = robot.forward_kinematics(q - dq, links_idx_local=[idx])[0][:, 0]
        np.testing.assert_allclose(J[:, :3, k], (p_plus - p_minus) / (2 * h), atol=1e-7)


def test_ik_reaches_targets_given_in_each_env_frame(scene2):
    scene, robot = scene2
    q_true = random_configs(robot.model, 2, seed=42)
    idx = robot.get_link(EE).idx
    target_pos, target_quat = (a[:, 0] for a in robot.forward_kinematics(q_true, links_idx_local=[idx]))
    info = robot.inverse_kinematics(robot.get_link(EE), target_pos, target_quat, return_info=True)
    assert info.converged.all()
    pos, _ = robot.forward_kinematics(info.q, links_idx_local=[idx])
    np.testing.assert_allclose(pos[:, 0], target_pos, atol=1e-4)


def test_unbatched_scene_has_unbatched_shapes():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    scene.build()
    assert robot.get_qpos().shape == (8,)
    assert robot.get_jacobian(EE).shape == (6, 8)
    pos, quat = robot.forward_kinematics(robot.get_qpos())
    assert pos.shape == (robot.model.n_links, 3) and quat.shape == (robot.model.n_links, 4)
    q = robot.inverse_kinematics(EE, [0.3, 0.0, 0.2], [0, 1, 0, 0], rot_mask=[False, False, True])
    assert q.shape == (8,)
    scene.close()


def test_misuse_is_reported():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    with pytest.raises(AppError, match="scene.build"):
        robot.get_qpos()
    scene.build(n_envs=2)
    with pytest.raises(AppError, match="already built"):
        scene.add_robot(str(WIDOWX_URDF))
    with pytest.raises(InputError, match=r"qpos must have shape \(2, 8\)"):
        robot.set_qpos(np.zeros((3, 8)))
    with pytest.raises(InputError, match="n_envs"):
        Scene().build(n_envs=0)
    scene.close()
