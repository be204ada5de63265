"""Motion planning (app.planning) on the WidowX AI: paths around a shelf, pose goals, typed failures, bad input."""

import numpy as np
import pytest

from app.collision import World, WorldBox
from app.errors import InputError, UnknownNameError
from app.planning import PlanOptions, PoseGoal, plan
from app.planning.planner import model_collision
from app.planning.space import PlanningSpace

TABLE = WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205))
SHELF = WorldBox("shelf", (0.15, 0.015, 0.15), (0.35, 0.0, 0.15))  # a wall between the two sides of the arm
WORLD = World(boxes=(TABLE, SHELF))
EE = "ee_gripper_link"


@pytest.fixture(scope="module")
def setup(widowx):
    cm = model_collision(widowx, WORLD, None)
    start = np.array([1.2, 1.2, 0.6, 0.0, 0.0, 0.0, 0.02, 0.02])
    goal = start.copy()
    goal[0] = -1.2
    return widowx, cm, start, goal


@pytest.fixture(scope="module")
def shelf_plan(setup):
    model, cm, start, goal = setup
    return plan(model, goal, start, collision=cm)


def _space(model, cm, start):
    return PlanningSpace(model, cm, start)


def test_path_goes_around_shelf_that_straight_line_hits(setup, shelf_plan):
    """The straight line start -> goal hits the shelf; the plan succeeds from start to goal anyway."""
    model, cm, start, goal = setup
    space = _space(model, cm, start)
    assert not space.motion_valid(space.active(start), space.active(goal), resolution=0.005)
    assert shelf_plan.success and shelf_plan.reason == "success"
    np.testing.assert_allclose(shelf_plan.path[0], start)
    np.testing.assert_allclose(shelf_plan.path[-1], goal, atol=1e-9)
    assert shelf_plan.length <= shelf_plan.raw_length + 1e-9


def test_every_waypoint_and_dense_substep_is_clear_by_the_model(setup, shelf_plan):
    """Every waypoint and every configuration at 1 mrad steps along the path clears every pair by the spheres."""
    _, cm, start, _ = setup
    path = shelf_plan.path
    assert cm.clear(path, 0.0).all()
    dense = np.concatenate([a + np.linspace(0, 1, int(np.ceil(np.abs(b - a).max() / 1e-3)) + 1)[:, None] * (b - a)
                            for a, b in zip(path[:-1], path[1:])])
    assert cm.clear(dense, 0.0).all()
    np.testing.assert_array_equal(path[:, 6:], np.broadcast_to(start[6:], path[:, 6:].shape))  # fingers held


def test_planned_path_is_clear_by_pybullet_closest_points(setup, shelf_plan):
    """PyBullet's closest points between the real shapes find no contact at 1 mrad steps; the straight line has one."""
    from app.sim.path_check import PyBulletReferee

    model, cm, start, goal = setup
    with PyBulletReferee(model, cm) as referee:
        assert referee.check_path(np.array([start, goal]), step=1e-3) is not None
        assert referee.check_path(shelf_plan.path, step=1e-3) is None


def test_full_pose_goal_is_reached(setup):
    """A 6-D pose goal (closed-form IK branches as goals) ends with the link at that pose."""
    model, cm, start, goal = setup
    pos, quat = model.forward_kinematics(goal, [EE])
    res = plan(model, PoseGoal(EE, pos[0], quat[0]), start, collision=cm)
    assert res.success and len(res.goals) >= 1
    p, q = model.forward_kinematics(res.path[-1], [EE])
    np.testing.assert_allclose(p[0], pos[0], atol=1e-4)
    assert abs(abs(q[0] @ quat[0]) - 1.0) < 1e-6


def test_pose_goal_with_masks_reaches_only_the_masked_axes(setup):
    """pos_mask (x, y) and rot_mask () leave z and the orientation free: x and y reached, the path clear."""
    model, cm, start, goal = setup
    pos, quat = model.forward_kinematics(goal, [EE])
    target = pos[0] + np.array([0.0, 0.0, 0.08])
    res = plan(model, PoseGoal(EE, target, quat[0], pos_mask=(True, True, False), rot_mask=(False, False, False)),
               start, collision=cm)
    assert res.success
    p, _ = model.forward_kinematics(res.path[-1], [EE])
    np.testing.assert_allclose(p[0, :2], target[:2], atol=1e-3)
    assert cm.clear(res.path, 0.0).all()


def test_planner_reaches_one_of_several_joint_goals(setup):
    """Several joint goals: the path ends at one of them (the free one: the other is in the shelf)."""
    model, cm, start, goal = setup
    blocked = start.copy()
    blocked[0] = 0.0  # the forearm through the shelf
    res = plan(model, np.array([blocked, goal]), start, collision=cm)
    assert res.success and len(res.goals) == 1
    np.testing.assert_allclose(res.path[-1], goal, atol=1e-9)


def test_goal_in_collision_is_reported_as_such(setup):
    model, cm, start, _ = setup
    blocked = start.copy()
    blocked[0] = 0.0
    res = plan(model, blocked, start, collision=cm)
    assert not res.success and res.reason == "goal_in_collision" and len(res.path) == 0
    assert "shelf" in res.detail


def test_start_in_collision_is_reported_as_such(setup):
    model, cm, start, goal = setup
    blocked = start.copy()
    blocked[0] = 0.0
    res = plan(model, goal, blocked, collision=cm)
    assert not res.success and res.reason == "start_in_collision"


def test_unreachable_pose_is_reported_as_no_ik_goal(setup):
    model, cm, start, _ = setup
    res = plan(model, PoseGoal(EE, (2.0, 0.0, 0.3)), start, collision=cm)
    assert not res.success and res.reason == "no_ik_goal"


def test_search_out_of_time_is_reported_as_timeout(setup):
    model, cm, start, goal = setup
    res = plan(model, goal, start, collision=cm, options=PlanOptions(timeout=1e-5, max_retry=0))
    assert not res.success and res.reason == "timeout"


def test_asymptotically_optimal_planner_on_request(setup):
    """RRT* (OMPL's, path-length objective) within its budget: a valid path, no longer than the search's raw one."""
    model, cm, start, goal = setup
    res = plan(model, goal, start, collision=cm, options=PlanOptions(planner="RRTstar", timeout=0.3))
    assert res.success and cm.clear(res.path, 0.0).all()


def test_unknown_planner_lists_the_valid_ones():
    with pytest.raises(UnknownNameError, match="RRTConnect.*BITstar|BITstar.*RRTConnect"):
        PlanOptions(planner="RRTConect")


@pytest.mark.parametrize("goal", [np.zeros(5), np.full(8, np.nan), np.zeros((2, 3, 8)), "home"])
def test_bad_goal_shapes_and_nan_raise_input_error(setup, goal):
    model, cm, start, _ = setup
    with pytest.raises(InputError):
        plan(model, goal, start, collision=cm)


def test_bad_start_and_options_raise_input_error(setup):
    model, cm, start, goal = setup
    with pytest.raises(InputError, match="qpos_start"):
        plan(model, goal, start[:6], collision=cm)
    with pytest.raises(InputError, match="outside its joint window"):
        plan(model, goal, start + np.r_[10.0, np.zeros(7)], collision=cm)
    with pytest.raises(InputError, match="resolution"):
        PlanOptions(resolution=0.0)
    with pytest.raises(InputError, match="step"):
        PlanOptions(step=-0.1)
    with pytest.raises(InputError, match="world"):
        plan(model, goal, start, world=[TABLE])


def test_an_unsmoothed_path_keeps_no_waypoint_on_the_line_between_its_neighbours(setup):
    """smooth_path=False: the search's path with its collinear waypoints dropped (RRT-Connect's steps of its range
    along one line are separate states: each would be a stop for the timing), the same motion."""
    model, cm, start, goal = setup
    res = plan(model, goal, start, collision=cm, options=PlanOptions(smooth_path=False, seed=3))
    d = np.diff(res.path, axis=0)
    u = d / np.linalg.norm(d, axis=1, keepdims=True)
    assert res.success and len(res.path) >= 3
    assert np.degrees(np.arccos(np.clip((u[1:] * u[:-1]).sum(axis=1), -1, 1))).min() > 1e-4
    assert res.length == pytest.approx(res.raw_length)
