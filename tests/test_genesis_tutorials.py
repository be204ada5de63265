"""Genesis's own IK tutorials (Genesis-Embodied-AI/Genesis, examples/tutorials/batched_IK.py and
advanced_IK_multilink.py) run here with only the import, the scene and entity set-up lines, the asset
path, the link names and a reachable centre changed: everything after ``scene.build`` is Genesis's text.
Each environment's result is checked against PyBullet's FK in that environment's frame."""

import numpy as np
import pybullet as pb

from app.kinematics.rotations import quat_to_matrix, xyzw_to_wxyz
from tests.conftest import WIDOWX_URDF

BATCHED_IK = f'''
import os
import numpy as np
from app import Scene

scene = Scene()
robot = scene.add_robot("{WIDOWX_URDF}")

########################## build ##########################
n_envs = 16
scene.build(n_envs=n_envs, env_spacing=(1.0, 1.0))

target_quat = np.tile(np.array([0, 1, 0, 0]), [n_envs, 1])  # pointing downwards
center = np.tile(np.array([0.35, 0.0, 0.2]), [n_envs, 1])
angular_speed = np.random.uniform(-10, 10, n_envs)
r = 0.1
ee_link = robot.get_link("ee_gripper_link")

horizon = 1000 if "PYTEST_VERSION" not in os.environ else 5
for i in range(horizon):
    target_pos = np.zeros([n_envs, 3])
    target_pos[:, 0] = center[:, 0] + np.cos(i / 360 * np.pi * angular_speed) * r
    target_pos[:, 1] = center[:, 1] + np.sin(i / 360 * np.pi * angular_speed) * r
    target_pos[:, 2] = center[:, 2]
    target_q = np.hstack([target_pos, target_quat])

    q = robot.inverse_kinematics(
        link=ee_link,
        pos=target_pos,
        quat=target_quat,
        rot_mask=[False, False, True],  # for demo purpose: only restrict direction of z-axis
    )

    robot.set_qpos(q)
    scene.step()
'''

ADVANCED_IK_MULTILINK = f'''
import os
import numpy as np
from app import Scene

scene = Scene()
robot = scene.add_robot("{WIDOWX_URDF}")

# two target links for visualization
target_left = scene.draw_debug_frame(np.eye(4), axis_length=0.1)
target_right = scene.draw_debug_frame(np.eye(4), axis_length=0.1)

########################## build ##########################
scene.build()

target_quat = np.array([0, 1, 0, 0])
center = np.array([0.3, -0.1, 0.2])
r = 0.1

left_finger = robot.get_link("left_fingertip")
right_finger = robot.get_link("right_fingertip")

horizon = 2000 if "PYTEST_VERSION" not in os.environ else 5
for i in range(horizon):
    target_pos_left = center + np.array([np.cos(i / 360 * np.pi), np.sin(i / 360 * np.pi), 0]) * r
    target_pos_right = target_pos_left + np.array([0.0, 0.03, 0])

    target_left.set_qpos(np.concatenate([target_pos_left, target_quat]))
    target_right.set_qpos(np.concatenate([target_pos_right, target_quat]))

    q = robot.inverse_kinematics_multilink(
        links=[left_finger, right_finger],
        poss=[target_pos_left, target_pos_right],
        quats=[target_quat, target_quat],
        rot_mask=[False, False, True],  # only restrict direction of z-axis
    )

    # Note that this IK is for visualization purposes, so here we do not call scene.step(), but only update the state and the visualizer
    # In actual control applications, you should instead use robot.control_dofs_position() and scene.step()
    robot.set_dofs_position(q)
    scene.visualizer.update()
'''


def _run(script: str) -> dict:
    namespace: dict = {}
    exec(compile(script, "<genesis tutorial>", "exec"), namespace)
    return namespace


def _pybullet_link(robot, env: int, link: str, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyBullet's frame of ``link`` at q in environment ``env``, in that environment's frame: (pos, R)."""
    body = robot.bodies[env]
    for joint, value in zip(robot.model.dof_names, q):
        pb.resetJointState(body.body_id, body.joint_index[joint], float(value), physicsClientId=robot.client)
    state = pb.getLinkState(body.body_id, body.link_index[link], computeForwardKinematics=True,
                            physicsClientId=robot.client)
    return np.array(state[4]) - robot.env_origins[env], quat_to_matrix(xyzw_to_wxyz(np.array(state[5])))


def test_batched_ik_tutorial_reaches_every_environment_target_in_its_own_frame(monkeypatch):
    monkeypatch.setenv("PYTEST_VERSION", "1")
    ns = _run(BATCHED_IK)
    robot, q, target_pos = ns["robot"], ns["q"], ns["target_pos"]
    assert q.shape == (16, robot.n_dofs)
    for env in range(16):
        pos, R = _pybullet_link(robot, env, "ee_gripper_link", q[env])
        np.testing.assert_allclose(pos, target_pos[env], atol=2e-4)  # Genesis's tolerance 5e-4, ours 1e-4
        assert R[:, 2] @ np.array([0.0, 0.0, -1.0]) > np.cos(2e-3)  # z axis pointing down
    ns["scene"].close()


def test_advanced_multilink_tutorial_places_both_fingertips_and_moves_the_target_frames(monkeypatch):
    monkeypatch.setenv("PYTEST_VERSION", "1")
    ns = _run(ADVANCED_IK_MULTILINK)
    robot, q = ns["robot"], ns["q"]
    assert q.shape == (robot.n_dofs,)
    for link, target in (("left_fingertip", ns["target_pos_left"]), ("right_fingertip", ns["target_pos_right"])):
        pos, R = _pybullet_link(robot, 0, link, q)
        np.testing.assert_allclose(pos, target, atol=2e-4)
        assert R[:, 2] @ np.array([0.0, 0.0, -1.0]) > np.cos(2e-3)
    frame_pos, _ = ns["target_left"].pose()
    np.testing.assert_allclose(frame_pos, ns["target_pos_left"], atol=1e-6)  # the visualizer update moved it
    ns["scene"].close()
