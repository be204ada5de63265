"""FrameTask: the error and Jacobian it reports, and its input checks."""

import numpy as np
import pytest

from app import InputError
from app.ik.tasks import FrameTask
from tests.conftest import random_configs

EE = "ee_gripper_link"


def test_error_is_target_minus_fk_and_jacobian_matches_finite_differences(widowx):
    q = random_configs(widowx, 3, seed=11)
    pos, quat = widowx.forward_kinematics(q + 0.05, [EE])
    task = FrameTask(widowx, EE)
    task.set_target(pos[:, 0], quat[:, 0])
    err, J = task.compute_error_and_jacobian(q)
    fk_pos = widowx.forward_kinematics(q, [EE])[0][:, 0]
    np.testing.assert_allclose(err[:, :3], pos[:, 0] - fk_pos, atol=1e-12)
    eps = 1e-6
    for k in range(widowx.n_dofs):  # the error moves by -J dq (error = target - current)
        dq = np.zeros(widowx.n_dofs)
        dq[k] = eps
        d_err = (task.compute_error(q + dq) - task.compute_error(q - dq)) / (2 * eps)
        np.testing.assert_allclose(d_err[:, :3], -J[:, :3, k], atol=1e-6)


def test_position_only_target_leaves_rotation_rows_empty(widowx):
    task = FrameTask(widowx, EE)
    task.set_target(np.array([[0.3, 0.0, 0.2]]), None)
    err, J = task.compute_error_and_jacobian(widowx.mid_config()[None])
    assert not err[:, 3:].any() and not J[:, 3:].any()


def test_bad_targets_and_order_of_calls_are_refused(widowx):
    task = FrameTask(widowx, EE)
    with pytest.raises(RuntimeError, match="set_target"):
        task.compute_error(widowx.mid_config()[None])
    with pytest.raises(InputError, match="same batch size"):
        task.set_target(np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (3, 1)))
    task.set_target(np.zeros((2, 3)), None)
    with pytest.raises(InputError, match="targets for 2 configurations"):
        task.compute_error(np.tile(widowx.mid_config(), (3, 1)))
    with pytest.raises(InputError, match="targets for 2 configurations"):
        task.params(3)
    with pytest.raises(InputError, match="zero quaternion"):
        task.set_target(np.zeros((1, 3)), np.zeros((1, 4)))


def test_every_registered_motion_type_names_the_links_it_moves():
    """The loader, the report and the video ask every motion for its moved links (no getattr probe with a default)."""
    from app.config.scene_sections import RobotConfig
    from app.tasks import TASK_TYPES as MOTION_TYPES

    robot = RobotConfig(ee_link="tool", arms={"left": "left_tool", "right": "right_tool"})
    for name, cls in MOTION_TYPES.items():
        motion = cls()
        links = motion.moved_links(robot)
        assert links or name == "arms", name  # an arms motion moves the arms it is given (none by default)
        assert all(isinstance(key, tuple) and isinstance(link, str) for key, link in links), name
