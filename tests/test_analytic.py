"""Closed-form IK: planar two-link (checked by hand and by FK) and the WidowX family, certified."""

import re

import numpy as np
import pytest

from app import InputError, RobotModel
from app.errors import NotApplicableError
from app.ik._lm import damped_step
from app.ik.analytic import analytic_ik, certify, nearest_solution, two_link_ik
from tests.conftest import WIDOWX_URDF, random_configs

EE = "ee_gripper_link"


def _fk2(l1, l2, t):
    return np.stack([l1 * np.cos(t[..., 0]) + l2 * np.cos(t[..., 0] + t[..., 1]),
                     l1 * np.sin(t[..., 0]) + l2 * np.sin(t[..., 0] + t[..., 1])], axis=-1)


def test_two_link_worked_example_with_corrected_figures():
    """l1 = l2 = 0.3, target (0.4, 0.2): cos t2 = 1/9, t2 = +-83.62 deg, and t1 = -15.25 deg for the
    t2 > 0 branch (the lesson prints -17.5 deg, which does not reach the target)."""
    theta, ok = two_link_ik(0.3, 0.3, 0.4, 0.2)
    assert ok
    np.testing.assert_allclose(np.degrees(theta[:, 1]), [83.6206, -83.6206], atol=1e-4)
    np.testing.assert_allclose(np.degrees(theta[0, 0]), -15.2453, atol=1e-4)
    np.testing.assert_allclose(_fk2(0.3, 0.3, theta), [[0.4, 0.2], [0.4, 0.2]], atol=1e-12)
    assert np.linalg.norm(_fk2(0.3, 0.3, np.radians([-17.5, 83.6])) - [0.4, 0.2]) > 1e-2


def test_lm_damped_step_matches_the_worked_example_and_is_the_damped_least_squares_optimum():
    """The IK's compiled damped step (app.ik._lm.damped_step) on the lesson's two-link example: at q = 0 the tip
    is (0.6, 0), J = [[0, 0], [0.6, 0.3]] (checked here by finite differences of the FK) and e = (-0.2, 0.2);
    with lambda^2 = 0.01 the step is (0.2609, 0.1304) and satisfies J^T (J dq - e) + lambda^2 dq = 0; a frozen
    DOF gets no step and the other solves the one-column problem."""
    eps = 1e-7
    J = np.stack([(_fk2(0.3, 0.3, np.eye(2)[i] * eps) - _fk2(0.3, 0.3, np.zeros(2))) / eps for i in range(2)], axis=1)
    np.testing.assert_allclose(J, [[0.0, 0.0], [0.6, 0.3]], atol=1e-6)
    J = np.array([[0.0, 0.0], [0.6, 0.3]])
    e = np.array([0.4, 0.2]) - _fk2(0.3, 0.3, np.zeros(2))
    dq = np.zeros(2)
    damped_step(J, e, 0.01, np.ones(2, dtype=bool), dq)
    np.testing.assert_allclose(dq, [0.26087, 0.13043], atol=1e-5)
    np.testing.assert_allclose(J.T @ (J @ dq - e) + 0.01 * dq, 0.0, atol=1e-12)
    damped_step(J, e, 0.01, np.array([False, True]), dq)
    assert dq[0] == 0.0
    np.testing.assert_allclose(dq[1], 0.3 * e[1] / (0.3 ** 2 + 0.01), rtol=1e-12)


def test_two_link_random_targets_hit_by_both_branches():
    rng = np.random.default_rng(0)
    l1, l2 = 0.35, 0.2
    t = rng.uniform(-np.pi, np.pi, (500, 2))
    xy = _fk2(l1, l2, t)
    theta, ok = two_link_ik(l1, l2, xy[:, 0], xy[:, 1])
    assert ok.all()
    np.testing.assert_allclose(_fk2(l1, l2, theta), np.repeat(xy[:, None], 2, 1), atol=1e-12)


@pytest.mark.parametrize("x, y, reachable", [
    (0.0, 0.0, True),    # at the base, equal links: folded, t1 arbitrary
    (0.6, 0.0, True),    # fully stretched
    (1e-13, 0.0, True),  # fully folded
    (0.7, 0.0, False),   # beyond reach
])
def test_two_link_degenerate_cases_are_finite(x, y, reachable):
    theta, ok = two_link_ik(0.3, 0.3, x, y)
    assert np.isfinite(theta).all() and bool(ok) == reachable
    if reachable:
        np.testing.assert_allclose(_fk2(0.3, 0.3, theta), [[x, y], [x, y]], atol=1e-9)


def test_two_link_annulus_and_bad_input():
    assert not two_link_ik(0.3, 0.1, 0.1, 0.0)[1]  # inside the inner radius 0.2
    with pytest.raises(InputError, match="link lengths"):
        two_link_ik(0.0, 0.3, 0.1, 0.1)
    with pytest.raises(InputError, match="NaN"):
        two_link_ik(0.3, 0.3, np.nan, 0.1)


def _full(model, arm, q_arm, rest=None):
    q = np.broadcast_to(model.mid_config() if rest is None else rest, q_arm.shape[:-1] + (model.n_dofs,)).copy()
    q[..., arm.dof_idx] = q_arm
    return q


@pytest.mark.parametrize("link, local_point", [(EE, None), ("left_fingertip", None), ("link_6", [0.05, 0.01, -0.02])])
def test_every_valid_branch_hits_the_target_to_1e9(widowx, link, local_point):
    arm = certify(widowx, link)
    q_true = random_configs(widowx, 2000, seed=20)
    q_true[:, 6:] = widowx.mid_config()[6:]
    lp = np.zeros(3) if local_point is None else np.array(local_point)
    R, p = widowx.link_frames(q_true)
    k = widowx.link_index(link)
    pos, quat = p[:, k] + np.einsum("nij,j->ni", R[:, k], lp), widowx.forward_kinematics(q_true, [link])[1][:, 0]
    q_all, valid = analytic_ik(widowx, link, pos, quat, local_point=local_point)
    assert q_all.shape == (2000, 8, 6) and valid.shape == (2000, 8) and valid.any(axis=1).all()
    R2, p2 = widowx.link_frames(_full(widowx, arm, q_all))
    point = p2[..., k, :] + np.einsum("nbij,j->nbi", R2[..., k, :, :], lp)
    assert np.abs(point - pos[:, None])[valid].max() <= 1e-9
    assert np.abs(R2[..., k, :, :] - R[:, None, k])[valid].max() <= 1e-9
    lo, hi = widowx.q_lower[:6], widowx.q_upper[:6]
    assert ((q_all >= lo) & (q_all <= hi))[valid].all()


def test_branch_set_contains_the_generating_configuration_for_10000_targets(widowx):
    q_true = random_configs(widowx, 10_000, seed=21)
    q_true[:, 6:] = widowx.mid_config()[6:]
    pos, quat = widowx.forward_kinematics(q_true, [EE])
    q_all, valid = analytic_ik(widowx, EE, pos[:, 0], quat[:, 0])
    close = np.abs(q_all - q_true[:, None, :6]).max(axis=-1) < 1e-7
    assert (close & valid).any(axis=1).all()


@pytest.mark.parametrize("q_arm", [
    [0.3, 1.0, 1.2, 0.4, 0.0, 0.7],               # wrist aligned (joint 4 at zero)
    [0.0, np.pi / 2, 2.356194490192345, 0.0, 0.0, 0.0],  # arm as stretched as its limits allow
    [1.0, 1.9, 0.2, -1.4, 0.5, 0.2],              # wrist centre near the base axis
    [0.2, 1.1, 0.7, 0.3, np.pi / 2, 0.1],          # joint 5 axis normal to the arm plane
])
def test_singular_targets_give_finite_answers_that_hit(widowx, q_arm):
    arm = certify(widowx, EE)
    q = _full(widowx, arm, np.array(q_arm))
    pos, quat = widowx.forward_kinematics(q, [EE])
    q_all, valid = analytic_ik(widowx, EE, pos[0], quat[0])
    assert np.isfinite(q_all).all() and valid.any()
    p2, _ = widowx.forward_kinematics(_full(widowx, arm, q_all[valid]), [EE])
    assert np.abs(p2[:, 0] - pos[0]).max() <= 1e-9


def test_wrist_centre_on_base_axis_is_finite(widowx):
    arm = certify(widowx, EE)
    W = np.array([0.0, 0.0, 0.4])  # wrist centre straight above joint 0: joint 0 is free
    quat = np.array([np.cos(0.3), 0.0, np.sin(0.3), 0.0])  # tool x axis tilted down by 0.6 rad
    tool_offset = 0.156062 + 0.02895  # wrist centre to ee_gripper_link along the tool x axis
    target = W + tool_offset * np.array([np.cos(0.6), 0.0, -np.sin(0.6)])
    q_all, valid = analytic_ik(widowx, EE, target, quat)
    assert np.isfinite(q_all).all() and valid.any()
    p2, _ = widowx.forward_kinematics(_full(widowx, arm, q_all[valid]), [EE])
    assert np.abs(p2[:, 0] - target).max() <= 1e-9


def test_certificate_refuses_y_offset_on_joint_2():
    text = WIDOWX_URDF.read_text()
    modified = text.replace('<origin rpy="0 0 0" xyz="-0.264 0 0"/>', '<origin rpy="0 0 0" xyz="-0.264 0.001 0"/>')
    assert modified != text
    with pytest.raises(NotApplicableError, match="not in one plane"):
        certify(RobotModel.from_urdf_string(modified), EE)


def test_certificate_refuses_non_intersecting_wrist_and_other_robots(kuka):
    text = WIDOWX_URDF.read_text()
    modified = text.replace('xyz="0.02895 0 -0.0455"', 'xyz="0.02895 0.002 -0.0455"')
    with pytest.raises(NotApplicableError, match=re.escape("joint 4 and 5 axes do not intersect")):
        certify(RobotModel.from_urdf_string(modified), EE)
    with pytest.raises(NotApplicableError):
        certify(kuka, "lbr_iiwa_link_7")
    with pytest.raises(NotApplicableError, match="six revolute joints"):
        certify(RobotModel.from_urdf(str(WIDOWX_URDF)), "link_3")


def test_nearest_solution_is_nearest_valid_branch(widowx):
    q_true = random_configs(widowx, 50, seed=22)
    q_true[:, 6:] = widowx.mid_config()[6:]
    pos, quat = widowx.forward_kinematics(q_true, [EE])
    q, found = nearest_solution(widowx, EE, pos[:, 0], quat[:, 0], q_true)
    assert found.all()
    np.testing.assert_allclose(q, q_true, atol=1e-7)


def test_analytic_seeding_polishes_in_one_iteration(widowx):
    q_true = random_configs(widowx, 200, seed=23)
    q_true[:, 6:] = widowx.mid_config()[6:]
    pos, quat = widowx.forward_kinematics(q_true, [EE])
    on = widowx.inverse_kinematics(EE, pos[:, 0], quat[:, 0], pos_tol=1e-5, rot_tol=1e-5, return_info=True)
    off = widowx.inverse_kinematics(EE, pos[:, 0], quat[:, 0], pos_tol=1e-5, rot_tol=1e-5, return_info=True,
                                    analytic_seed=False)
    assert on.converged.all() and (on.iters == 1).all()
    assert off.iters.mean() > 5 * on.iters.mean()


def test_one_orientation_broadcasts_against_a_batch_of_positions(widowx):
    q = random_configs(widowx, 4, seed=9)
    pos, quat = (a[:, 0] for a in widowx.forward_kinematics(q, ["ee_gripper_link"]))
    q_all, valid = analytic_ik(widowx, "ee_gripper_link", pos, quat[0])
    assert q_all.shape == (4, 8, 6) and valid.shape == (4, 8)
    for i in range(4):
        q_i, valid_i = analytic_ik(widowx, "ee_gripper_link", pos[i], quat[0])
        np.testing.assert_array_equal(q_all[i], q_i)
        np.testing.assert_array_equal(valid[i], valid_i)
