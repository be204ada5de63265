"""PoseIK.solve_pose: one full-pose target in one compiled call, with the answers of PoseIK.solve bit for bit, the same
refusals, and an error where it does not apply."""

from __future__ import annotations

import numpy as np
import pytest

from app.collision.pairs import sample_configs
from app.errors import InputError
from app.ik.prepared import PoseIK
from app.ik.solver import IKOptions

LINK = "ee_gripper_link"


@pytest.fixture(scope="module")
def solver(widowx):
    return PoseIK(widowx, LINK, options=IKOptions(pos_tol=1e-5, rot_tol=1e-5))


def test_solve_pose_gives_solve_s_answers_bit_for_bit_from_any_start(widowx, solver):
    q_targets = sample_configs(widowx, 60, seed=4)
    pos, quat = (a[:, 0] for a in widowx.forward_kinematics(q_targets, [LINK]))
    starts = sample_configs(widowx, 60, seed=5)
    for i in range(60):
        for q0 in (None, starts[i]):
            q, converged = solver.solve_pose(pos[i], quat[i], q0)
            ref = solver.solve(pos[i], quat[i], q0)
            assert np.array_equal(q, ref.q) and converged == bool(ref.converged) and converged


def test_the_start_chooses_the_branch_as_solve_does(widowx, solver):
    q_target = sample_configs(widowx, 1, seed=9)[0]
    pos, quat = (a[0, 0] for a in widowx.forward_kinematics(q_target[None], [LINK]))
    q, ok = solver.solve_pose(pos, quat, q_target)
    assert ok and np.allclose(q[:6], q_target[:6], atol=1e-4)  # started at a solution: that branch


def test_an_unreachable_pose_is_not_converged(solver):
    q, ok = solver.solve_pose(np.array([2.0, 0.0, 0.3]), np.array([1.0, 0.0, 0.0, 0.0]))
    assert not ok and np.isfinite(q).all()


@pytest.mark.parametrize("pos, quat, match", [
    ([np.nan, 0.0, 0.3], [1.0, 0.0, 0.0, 0.0], "NaN or inf"),
    ([0.3, 0.0, 0.3], [0.0, 0.0, 0.0, 0.0], "zero quaternion"),
])
def test_a_bad_target_is_refused_as_solve_refuses_it(solver, pos, quat, match):
    with pytest.raises(InputError, match=match):
        solver.solve_pose(np.array(pos), np.array(quat))


def test_a_batch_goes_through_solve(widowx, solver):
    q_targets = sample_configs(widowx, 3, seed=2)
    pos, quat = (a[:, 0] for a in widowx.forward_kinematics(q_targets, [LINK]))
    q, ok = solver.solve_pose(pos, quat)
    assert q.shape == (3, widowx.n_dofs) and ok.shape == (3,) and ok.all()


def test_solve_pose_needs_one_link_s_full_pose_with_a_closed_form(widowx):
    with pytest.raises(InputError, match="use solve"):
        PoseIK(widowx, LINK, rot_mask=[False, False, True]).solve_pose(np.zeros(3), np.array([1.0, 0, 0, 0]))


def test_strided_targets_and_starts_give_the_same_answers(widowx, solver):
    q_targets = sample_configs(widowx, 4, seed=7)
    pos, quat = (a[:, 0] for a in widowx.forward_kinematics(q_targets, [LINK]))
    wide_pos, wide_quat = np.repeat(pos, 2, axis=1), np.repeat(quat, 2, axis=1)  # every other column: strided views
    starts = np.repeat(sample_configs(widowx, 4, seed=8), 2, axis=1)
    for i in range(4):
        q, ok = solver.solve_pose(wide_pos[i, ::2], wide_quat[i, ::2], starts[i, ::2])
        ref = solver.solve(pos[i], quat[i], starts[i, ::2].copy())
        assert ok and np.array_equal(q, ref.q)
