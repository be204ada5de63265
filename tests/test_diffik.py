"""Differential IK with a nullspace objective; manipulability."""

import numpy as np

from app.ik.diffik import diff_ik, manipulability, manipulability_gradient, mid_range_velocity
from tests.conftest import random_configs


def test_diff_ik_tracks_a_twist(widowx):
    q = random_configs(widowx, 1, seed=30)[0]
    J = widowx.get_jacobian(q, "ee_gripper_link")
    V = np.array([0.05, -0.02, 0.03, 0.1, 0.0, -0.2])
    qdot = diff_ik(J, V, damping=1e-4)
    np.testing.assert_allclose(J @ qdot, V, atol=1e-5)


def test_secondary_objective_moves_only_in_the_nullspace_of_a_5d_task(widowx):
    q = widowx.mid_config()
    J = widowx.get_jacobian(q, "ee_gripper_link")[:5]  # drop one rotation row: a 5-D task
    V = np.zeros(5)
    secondary = mid_range_velocity(q + 0.3, widowx.q_lower, widowx.q_upper, gain=2.0)
    qdot = diff_ik(J, V, damping=1e-6, qdot_secondary=secondary)
    assert np.linalg.norm(qdot) > 1e-2           # the posture does move
    np.testing.assert_allclose(J @ qdot, 0.0, atol=1e-6)  # the task does not feel it


def test_manipulability_zero_at_singularity_and_matches_det(kuka):
    J = kuka.get_jacobian(np.zeros(7), "lbr_iiwa_link_7")  # all axes aligned
    assert manipulability(J) < 1e-6
    q = random_configs(kuka, 1, seed=31)[0]
    J = kuka.get_jacobian(q, "lbr_iiwa_link_7")
    np.testing.assert_allclose(manipulability(J), np.sqrt(np.linalg.det(J @ J.T)), rtol=1e-12)


def test_following_manipulability_gradient_increases_it(widowx):
    q = widowx.mid_config()
    jac = lambda x: widowx.get_jacobian(x, "ee_gripper_link")[:, :6]  # noqa: E731
    grad = manipulability_gradient(jac, q)
    assert manipulability(jac(q + 1e-2 * grad / np.linalg.norm(grad))) > manipulability(jac(q))
