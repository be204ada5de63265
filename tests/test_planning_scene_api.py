"""Genesis's plan_path on the scene robot (app.planning.scene_api): a Genesis-style script on a 3-environment
scene, each environment with its block elsewhere; paths judged by PyBullet's closest points of the real bodies."""

import itertools

import numpy as np
import pybullet as pb
import pytest

from app import InputError, UnknownNameError
from app.planning.scene_api import plan_path
from app.sim.scene import Scene
from app.specs import BoxSpec, ObjectSpec
from tests.conftest import WIDOWX_URDF

N_ENVS = 3
BLOCK_H = 0.3  # [m] a block the arm cannot pass below at its sweeping pose
YAWS = np.array([-0.8, 0.0, 0.8])  # [rad] where each environment's block stands around the base, 0.3 m out
ARM = np.array([0.0, 1.2, 0.8, 0.0, 0.0, 0.0, 0.02, 0.02])  # a low reach: sweeping joint_0 hits any block
START, GOAL = ARM + np.eye(8)[0] * -1.5, ARM + np.eye(8)[0] * 1.5  # the sweep around the base
TABLE = BoxSpec(name="table", size=(0.8, 1.0, 0.02), pos=(0.2, 0.0, -0.011))


@pytest.fixture(scope="module")
def blocks():
    """The script: a table, a block per environment at its own place, the robot (Genesis's order of calls)."""
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    scene.add_box(TABLE)
    block = scene.add_object(ObjectSpec(name="block", size=(0.06, 0.06, BLOCK_H), pos=(0.3, 0.0, BLOCK_H / 2)))
    scene.build(n_envs=N_ENVS)
    block.set_pose(np.stack([0.3 * np.cos(YAWS), 0.3 * np.sin(YAWS), np.full(N_ENVS, BLOCK_H / 2)], axis=1))
    yield scene, robot, block
    scene.close()


def _closest(robot, env: int, body: int, path: np.ndarray, step: float = 2e-3) -> float:
    """PyBullet's smallest distance [m] (< 0: penetrating) between environment ``env``'s robot and ``body``
    along the straight edges of ``path`` (N, n_dofs), configurations at most ``step`` [rad] apart per DOF."""
    body_id, joints = robot.bodies[env].body_id, [robot.bodies[env].joint_index[n] for n in robot.model.dof_names]
    best = np.inf
    for qa, qb in itertools.pairwise(path):
        for t in np.linspace(0.0, 1.0, max(2, int(np.ceil(np.abs(qb - qa).max() / step)) + 1)):
            for joint, value in zip(joints, qa + t * (qb - qa)):
                pb.resetJointState(body_id, joint, float(value), physicsClientId=robot.client)
            pts = pb.getClosestPoints(body_id, body, 0.05, physicsClientId=robot.client)
            best = min([best] + [p[8] for p in pts])
    return best


def test_each_environment_plans_around_its_own_block_not_the_others(blocks):
    """Every path keeps clear of its own environment's block, yet runs through another environment's block: each
    environment was planned against its own objects (and the straight sweep hits every block)."""
    _, robot, block = blocks
    straight = np.array([START, GOAL])
    assert all(_closest(robot, e, block.body_ids[e], straight, step=0.02) < 0 for e in range(N_ENVS))
    path, valid = plan_path(robot, GOAL, START, num_waypoints=50, return_valid_mask=True)
    assert path.shape == (50, N_ENVS, robot.n_dofs) and valid.tolist() == [True] * N_ENVS
    for e in range(N_ENVS):
        assert _closest(robot, e, block.body_ids[e], path[:, e]) > 0, f"env {e}'s path touches its own block"
        others = [_closest(robot, j, block.body_ids[j], path[:, e], step=0.01) for j in range(N_ENVS) if j != e]
        assert min(others) < 0, f"env {e}'s path clears every block: planned against more than its own"
        np.testing.assert_allclose(path[[0, -1], e], [START, GOAL], atol=1e-9)


def test_envs_idx_plans_only_those_environments_from_their_joints_now(blocks):
    """envs_idx [2, 0]: two paths in that order, each from its environment's current joints (qpos_start None),
    one goal per environment; the environment in collision at its goal is invalid and holds its start."""
    _, robot, _ = blocks
    starts = np.array([START, ARM, START])
    starts[1, 0] = -1.2
    robot.set_qpos(starts)
    goal_in_block = ARM.copy()  # joint_0 = 0 reaches through the block standing at yaw 0 in environment 1...
    goals = np.array([GOAL, goal_in_block])  # ... not in environment 0
    path, valid = plan_path(robot, goals, None, num_waypoints=20, envs_idx=[2, 0], return_valid_mask=True)
    assert path.shape == (20, 2, robot.n_dofs) and valid.tolist() == [True, True]
    np.testing.assert_allclose(path[0], starts[[2, 0]], atol=1e-9)
    np.testing.assert_allclose(path[-1], goals, atol=1e-9)
    path, valid = plan_path(robot, goal_in_block, None, num_waypoints=20, envs_idx=[1], return_valid_mask=True)
    assert valid.tolist() == [False]
    np.testing.assert_allclose(path[:, 0], np.broadcast_to(starts[1], (20, robot.n_dofs)))
    res = plan_path(robot, goal_in_block, envs_idx=[1], return_result=True)
    assert [r.reason for r in res] == ["goal_in_collision"]


def test_bad_input_is_refused_with_the_argument_named(blocks):
    _, robot, _ = blocks
    cases = [
        ({"qpos_goal": np.zeros(3)}, InputError, "qpos_goal must have shape"),
        ({"qpos_goal": np.zeros((2, 8))}, InputError, r"\(3, 8\)"),
        ({"qpos_goal": GOAL, "qpos_start": np.zeros((2, 8))}, InputError, "qpos_start"),
        ({"qpos_goal": GOAL, "envs_idx": [3]}, InputError, "envs_idx"),
        ({"qpos_goal": GOAL, "num_waypoints": None}, InputError, "num_waypoints"),
        ({"qpos_goal": GOAL, "num_waypoints": 1}, InputError, "num_waypoints"),
        ({"qpos_goal": GOAL + np.eye(8)[1] * 5.0}, InputError, "joint_1"),
        ({"qpos_goal": GOAL, "timeout": "1"}, InputError, "timeout"),
        ({"qpos_goal": GOAL, "max_retry": -1}, InputError, "max_retry"),
        ({"qpos_goal": GOAL, "ee_link_name": "ee_gripper_link"}, InputError, "with_entity"),
        ({"qpos_goal": GOAL, "with_entity": "block"}, InputError, "ee_link_name"),
        ({"qpos_goal": GOAL, "ee_link_name": "ee_gripper_link", "with_entity": "cup"}, UnknownNameError, "block"),
        ({"qpos_goal": GOAL, "ee_link_name": "hand", "with_entity": "block"}, UnknownNameError, "hand"),
        ({"qpos_goal": GOAL, "planner": "PRM2"}, UnknownNameError, "RRTConnect"),
    ]
    for kwargs, error, words in cases:
        with pytest.raises(error, match=words):
            plan_path(robot, **kwargs)


def test_an_unbatched_scene_gets_one_path_and_a_bool_and_refuses_envs_idx():
    with Scene() as scene:
        robot = scene.add_robot(str(WIDOWX_URDF))
        scene.add_box(TABLE)
        scene.build()
        path, ok = plan_path(robot, GOAL, START, num_waypoints=12, return_valid_mask=True)
        assert path.shape == (12, robot.n_dofs) and ok is True
        with pytest.raises(InputError, match="envs_idx"):
            plan_path(robot, GOAL, START, envs_idx=[0])
        with pytest.raises(InputError, match=r"\(8,\)"):
            plan_path(robot, np.array([GOAL]), START)


def _carried_closest(robot, link: str, obj, other, path: np.ndarray, step: float = 5e-3) -> float:
    """PyBullet's smallest distance [m] between ``obj`` carried by ``link`` (at its pose relative to the link now)
    and ``other`` along ``path`` (N, n_dofs) of an unbatched scene; ``obj`` is left where it was."""
    from app.kinematics.rotations import matrix_to_quat, quat_to_matrix, wxyz_to_xyzw

    li = [robot.get_link(link).idx_local]
    R_l, p_l = quat_to_matrix(robot.get_links_quat(li)[0]), robot.get_links_pos(li)[0]
    R_rel, p_rel = R_l.T @ quat_to_matrix(obj.get_quat()), R_l.T @ (obj.get_pos() - p_l)
    pos0, quat0 = obj.get_pos(), obj.get_quat()
    best = np.inf
    for qa, qb in itertools.pairwise(path):
        for t in np.linspace(0.0, 1.0, max(2, int(np.ceil(np.abs(qb - qa).max() / step)) + 1)):
            pos, quat = robot.forward_kinematics(qa + t * (qb - qa), links_idx_local=li)
            R = quat_to_matrix(quat[0])
            pb.resetBasePositionAndOrientation(obj.body_ids[0], (pos[0] + R @ p_rel).tolist(),
                                              wxyz_to_xyzw(matrix_to_quat(R @ R_rel)).tolist(),
                                              physicsClientId=robot.client)
            pts = pb.getClosestPoints(obj.body_ids[0], other.body_ids[0], 0.05, physicsClientId=robot.client)
            best = min([best] + [p[8] for p in pts])
    obj.set_pose(pos0, quat0)
    return best


def test_an_attached_object_moves_with_its_link_and_is_kept_clear():
    """with_entity / ee_link_name: a rod hanging from the gripper is carried over a block the bare arm's sweep
    passes above; the same plan without the attachment would swing the rod through the block."""
    high = np.array([0.0, 1.0, 0.8, 0.0, 0.0, 0.0, 0.02, 0.02])  # the bare arm sweeps above the block
    start, goal = high + np.eye(8)[0] * -1.0, high + np.eye(8)[0] * 1.0
    with Scene() as scene:
        robot = scene.add_robot(str(WIDOWX_URDF))
        scene.add_box(TABLE)
        block = scene.add_object(ObjectSpec(name="block", size=(0.06, 0.06, 0.2), pos=(0.36, 0.0, 0.1)))
        rod = scene.add_object(ObjectSpec(name="rod", size=(0.03, 0.03, 0.14), pos=(-0.3, 0.4, 0.1)))
        scene.build()
        robot.set_qpos(start)
        ee = "ee_gripper_link"
        rod.set_pose(robot.get_links_pos([robot.get_link(ee).idx_local])[0] + [0.0, 0.0, -0.095])
        path, ok = plan_path(robot, goal, None, num_waypoints=60, ee_link_name=ee, with_entity=rod,
                             return_valid_mask=True)
        assert ok is True and _carried_closest(robot, ee, rod, block, path) > 0
        bare = plan_path(robot, goal, None, num_waypoints=60)  # not attached: an obstacle where it hangs now
        assert _carried_closest(robot, ee, rod, block, bare) < 0


def test_the_scene_robots_own_plan_path_is_genesiss_call(blocks):
    """A Genesis script writes ``robot.plan_path(qpos_goal=..., qpos_start=..., num_waypoints=..., envs_idx=...,
    return_valid_mask=True)``: the scene robot's method gives the function's paths, and its signature has Genesis's
    names in Genesis's order."""
    import inspect

    _, robot, _ = blocks
    path, valid = robot.plan_path(qpos_goal=GOAL, qpos_start=START, num_waypoints=20, envs_idx=[2, 0],
                                  return_valid_mask=True)
    same, same_valid = plan_path(robot, GOAL, START, num_waypoints=20, envs_idx=[2, 0], return_valid_mask=True)
    np.testing.assert_array_equal(path, same)
    assert path.shape == (20, 2, robot.n_dofs) and valid.tolist() == same_valid.tolist() == [True, True]
    names = list(inspect.signature(robot.plan_path).parameters)
    assert names[:12] == ["qpos_goal", "qpos_start", "max_nodes", "resolution", "timeout", "max_retry",
                          "smooth_path", "num_waypoints", "ignore_collision", "planner", "envs_idx",
                          "return_valid_mask"]
