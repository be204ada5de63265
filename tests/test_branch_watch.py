"""Where a path of IK answers leaves its branch, and why (app.ik.branch_watch), in the callers that turn poses into
joints: the causes at known configurations; a jump found at its waypoint, a fast move's long steps not mistaken for
one; the planner's pose goals follow a path through the wrist's singular limit without a jump; the driver's Cartesian
path refuses a path whose answers would jump, with the waypoint and the cause, before anything moves."""

from __future__ import annotations

import numpy as np
import pytest

import app.trossen_arm as trossen_arm  # noqa: PLR0402  (as a script for the real driver imports it)
from app import RobotModel
from app.collision import World, collision_model
from app.ik.branch_watch import JUMP, first_leave, leave_cause, pose_steps
from app.kinematics.rotations import quat_to_matrix
from app.planning.goals import PoseGoal, pose_goals
from app.planning.space import PlanningSpace
from app.trossen_arm import world
from app.trossen_arm.cartesian import ToolKinematics
from tests.conftest import WIDOWX_URDF

LINK, ARM = "ee_gripper_link", np.arange(6)


@pytest.fixture(scope="module")
def model() -> RobotModel:
    return RobotModel.from_urdf(str(WIDOWX_URDF))


def test_causes_at_the_wrist_singular_limit_a_joint_limit_and_elsewhere(model):
    q = model.mid_config()
    wrist, limit = q.copy(), q.copy()
    wrist[4] = model.q_lower[4] + 1e-4  # joint_4 at -pi/2: joints 3 and 5 line up
    limit[0] = model.q_upper[0] - 0.01
    assert leave_cause(model, LINK, wrist, ARM) == "wrist_singularity"
    assert leave_cause(model, LINK, limit, ARM) == "joint_limit"
    assert leave_cause(model, LINK, q, ARM) == "other"


def test_a_jump_is_found_at_its_waypoint_and_a_missing_answer_as_unreachable(model):
    q = np.tile(model.mid_config(), (10, 1))
    q[:, 0] += np.linspace(0.0, 0.18, 10)  # 0.02 rad a waypoint: on its branch
    assert first_leave(model, LINK, q, ARM) is None
    q[6:, 3] += 1.0
    leave = first_leave(model, LINK, q, ARM)
    assert (leave.index, round(leave.jump, 3), leave.cause) == (6, 1.0, "other")
    solved = np.ones(10, dtype=bool)
    solved[4] = False
    assert first_leave(model, LINK, q, ARM, solved=solved).cause == "unreachable"


def test_a_fast_moves_long_steps_follow_its_poses_and_are_not_a_leave(model):
    q = np.tile(model.mid_config(), (4, 1))
    q[:, 0] += np.array([0.0, 0.5, 1.0, 1.5])  # 0.5 rad a sample: the base turning fast
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q, [LINK]))
    steps = pose_steps(pos, quat_to_matrix(quat))
    assert first_leave(model, LINK, q, ARM, steps=steps) is None  # the poses moved as far
    assert first_leave(model, LINK, q, ARM).jump == pytest.approx(0.5)  # without the poses' steps: a jump


def test_the_planners_pose_goals_follow_the_wrist_to_its_singular_limit_without_a_jump(model):
    s = np.linspace(0.0, 1.0, 1000)  # scripts/bench_ik_continuity.py's wrist path: every arm joint sways
    q_path = np.tile(model.mid_config(), (1000, 1))
    for j, (amp, freq) in enumerate(((0.4, 1.0), (0.2, 1.5), (0.3, 1.0), (0.3, 2.0), (0.2, 1.0), (0.5, 1.0))):
        q_path[:, j] += amp * np.sin(2 * np.pi * freq * s + j)
    q_path[:, 4] = -1.2 - 0.3708 * np.sin(np.pi * s)  # to within 1e-3 rad of the limit at -pi/2 and back
    q_path = np.clip(q_path, model.q_lower, model.q_upper)
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q_path, [LINK]))
    space = PlanningSpace(model, collision_model(model, World()), q_path[0])
    q, out = q_path[0], []
    for p, r in zip(pos, quat):
        q = space.full(pose_goals(space, PoseGoal(LINK, tuple(p), tuple(r)), q).q[0])
        out.append(q)
    assert first_leave(model, LINK, np.array(out), ARM) is None


def test_the_drivers_cartesian_path_refuses_answers_that_would_jump_and_nothing_moves(monkeypatch):
    world.reset_world(scale=0.0)
    driver = trossen_arm.TrossenArmDriver()
    driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "192.168.1.2", False)
    try:
        driver.set_all_modes(trossen_arm.Mode.position)
        driver.set_all_positions([0.0, np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0, 0.0])
        before = np.array(driver.get_all_positions())
        goal = np.array(driver.get_cartesian_positions())
        goal[0] -= 0.05
        solve, calls = ToolKinematics.solve, []

        def flipping(self, pose, q_seed, refine=False):  # the wrist's answer flips half-way along the path
            q = solve(self, pose, q_seed, refine)
            calls.append(1)
            if q is not None and len(calls) > 100:
                q = q.copy()
                q[self.arm_dofs[3]] += 2 * JUMP
            return q

        monkeypatch.setattr(ToolKinematics, "solve", flipping)
        with pytest.raises(trossen_arm.RuntimeError, match=r"leaves its inverse kinematics branch at sample 100 "
                                                           r"of 201 .* \(other\); nothing moved"):
            driver.set_cartesian_positions(goal, trossen_arm.InterpolationSpace.cartesian, 2.0)
        assert np.abs(np.array(driver.get_all_positions()) - before).max() < 1e-4
    finally:
        driver.cleanup()
        world.world().close()
