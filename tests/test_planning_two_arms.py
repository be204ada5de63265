"""Planning the Stationary AI's two arms together (12 DOFs, fingers held): arm-arm pairs, joint and pose goals."""

import numpy as np
import pytest

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.planning import PlanOptions, PoseGoal, plan
from app.planning.space import PlanningSpace
from tests.conftest import require_reference

LEFT, RIGHT = "follower_left_ee_gripper_link", "follower_right_ee_gripper_link"
START = np.array([0.0, 1.2, 1.0, -0.3, 0.0, 0.0, 0.02, 0.02] * 2)


@pytest.fixture(scope="module")
def rig():
    ref = require_reference()
    path = ref / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
    model = RobotModel.from_urdf(str(path), package_dirs=[str(ref)])
    cm = collision_model(model, World(), package_dirs=[str(ref)])
    return model, cm


def _arm_arm(cm):
    sides = [("follower_left" in a) + 2 * ("follower_right" in a) for a, _ in cm.pair_names], \
        [("follower_left" in b) + 2 * ("follower_right" in b) for _, b in cm.pair_names]
    return np.array([{x, y} == {1, 2} for x, y in zip(*sides)])


def test_two_arms_plan_twelve_dofs_clear_of_each_other(rig):
    """A goal whose straight line makes the arms collide (arm-arm pairs): the path keeps every pair clear."""
    model, cm = rig
    space = PlanningSpace(model, cm, START)
    assert space.n_active == 12 and _arm_arm(cm).any()
    # the left gripper reaching past the right one, then back to its side: the straight line crosses the right arm
    start, goal = START.copy(), START.copy()
    start[:6] = (-0.288, 1.794, 1.383, 0.098, 0.108, 0.0)
    goal[:6] = (0.464, 1.282, 1.037, -0.234, -0.199, 0.0)
    line = space.full(space.edge_configs(space.active(start), space.active(goal), 0.01))
    d, _ = cm.distances(line, with_gradient=False)
    assert cm.clear(np.array([start, goal]), 0.0).all() and (d[:, _arm_arm(cm)] < 0).any()
    res = plan(model, goal, start, collision=cm, options=PlanOptions(timeout=10.0))  # a budget: it returns once solved
    assert res.success, res.detail
    dense = np.concatenate([space.full(space.edge_configs(space.active(a), space.active(b), 1e-3))
                            for a, b in zip(res.path[:-1], res.path[1:])])
    assert cm.clear(dense, 0.0).all()
    np.testing.assert_array_equal(res.path[:, [6, 7, 14, 15]], np.full((len(res.path), 4), 0.02))


def test_two_arm_pose_goals_reach_both_poses_with_a_box_on_the_table(rig):
    """One pose goal per arm (each arm's closed-form branches, combined), a box on the table: both links end at
    their poses, every pair clear."""
    model, _ = rig
    ref = require_reference()
    target = START.copy()
    target[:6] = (0.464, 1.282, 1.037, -0.234, -0.199, 0.0)
    target[8:14] = (-0.4, 1.3, 1.0, -0.2, 0.2, 0.3)
    pos, quat = model.forward_kinematics(target, [LEFT, RIGHT])
    cm = collision_model(model, World(boxes=(WorldBox("box", (0.04, 0.04, 0.04), (0.0, 0.0, 0.08)),)),
                         package_dirs=[str(ref)])
    assert cm.clear(np.array([START, target]), 0.0).all()
    goals = (PoseGoal(LEFT, pos[0], quat[0]), PoseGoal(RIGHT, pos[1], quat[1]))
    res = plan(model, goals, START, collision=cm)
    assert res.success, res.detail
    p, _ = model.forward_kinematics(res.path[-1], [LEFT, RIGHT])
    np.testing.assert_allclose(p, pos, atol=1e-4)
    assert cm.clear(res.path, 0.0).all()


def test_two_arm_export_uses_left_and_right_names_within_limits(rig, tmp_path):
    """The timed two-arm path exports as left_joint_0..6, right_joint_0..6 within the published limits x safety."""
    from app.planning.export import driver_velocity_limits, read_trajectory, time_for_driver, to_driver, write_npz

    model, cm = rig
    goal = START.copy()
    goal[[0, 8]] = (0.3, -0.3)
    res = plan(model, goal, START, collision=cm)
    assert res.success, res.detail
    traj = time_for_driver(model, res.path, rate=100.0)
    assert (np.abs(traj.qd) <= driver_velocity_limits(model) + 1e-9).all()
    back = read_trajectory(write_npz(to_driver(model, traj), tmp_path / "two.npz"))
    assert back.names == tuple(f"{s}_joint_{i}" for s in ("left", "right") for i in range(7)) and back.rate == 100.0
    np.testing.assert_allclose(back.position[-1, [0, 7]], (0.3, -0.3), atol=1e-9)
