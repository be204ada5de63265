"""Rotation utilities against scipy and against their own inverses, near 0 and near pi."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from app.kinematics import rotations as rot


def _random_rotvecs(n, seed=0):
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    return axes * rng.uniform(0, np.pi, (n, 1))


def test_quat_to_matrix_matches_scipy():
    quat = rot.quat_normalize(np.random.default_rng(1).normal(size=(100, 4)))
    expected = Rotation.from_quat(rot.wxyz_to_xyzw(quat)).as_matrix()
    np.testing.assert_allclose(rot.quat_to_matrix(quat), expected, atol=1e-12)


def test_matrix_to_quat_round_trip_and_positive_w():
    quat = rot.quat_normalize(np.random.default_rng(2).normal(size=(200, 4)))
    back = rot.matrix_to_quat(rot.quat_to_matrix(quat))
    np.testing.assert_allclose(back, quat, atol=1e-12)
    assert (back[:, 0] >= 0).all()


@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-7, 1e-3, 1.0, np.pi - 1e-3, np.pi - 1e-7, np.pi - 1e-12, np.pi])
def test_log_exp_exact_at_extreme_angles(angle):
    axes = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 2.0, -2.0]]) / np.array([[1], [1], [1], [3]])
    rotvec = axes * angle
    R = rot.so3_exp(rotvec)
    np.testing.assert_allclose(R, Rotation.from_rotvec(rotvec).as_matrix(), atol=1e-14)
    back = rot.so3_log(R)
    np.testing.assert_allclose(np.linalg.norm(back, axis=1), angle, atol=1e-12)
    # at pi, +axis and -axis are the same rotation
    np.testing.assert_allclose(rot.so3_exp(back), R, atol=1e-12)
    if angle < np.pi - 1e-6:
        np.testing.assert_allclose(back, rotvec, atol=1e-12)


def test_log_of_random_rotations_matches_scipy():
    rotvec = _random_rotvecs(500, seed=3)
    np.testing.assert_allclose(rot.so3_log(rot.so3_exp(rotvec)), rotvec, atol=1e-11)
    np.testing.assert_allclose(rot.quat_log(rot.quat_exp(rotvec)), rotvec, atol=1e-11)


def test_quat_multiply_composes_like_matrices():
    rng = np.random.default_rng(4)
    q1, q2 = rot.quat_normalize(rng.normal(size=(50, 4))), rot.quat_normalize(rng.normal(size=(50, 4)))
    np.testing.assert_allclose(rot.quat_to_matrix(rot.quat_multiply(q1, q2)),
                               rot.quat_to_matrix(q1) @ rot.quat_to_matrix(q2), atol=1e-12)
    np.testing.assert_allclose(rot.quat_to_matrix(rot.quat_conjugate(q1)),
                               np.swapaxes(rot.quat_to_matrix(q1), -1, -2), atol=1e-12)


def test_rpy_follows_urdf_fixed_axis_convention():
    rpy = np.array([0.3, -0.7, 2.1])
    expected = Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x, then y, then z
    np.testing.assert_allclose(rot.rpy_to_matrix(rpy), expected, atol=1e-14)


def test_xyzw_wxyz_conversions_are_inverse_and_hand_pybullet_unit_quaternions():
    q = np.array([0.1, 0.2, 0.3, 0.4]) / np.sqrt(0.3)
    np.testing.assert_allclose(rot.xyzw_to_wxyz(rot.wxyz_to_xyzw(q)), q, atol=1e-15)
    np.testing.assert_allclose(rot.wxyz_to_xyzw(2.0 * q), q[[1, 2, 3, 0]], atol=1e-15)
