"""Boundary checks: clear errors for bad arrays, and the compiled quaternion-to-rotation pass."""

import numpy as np
import pytest

from app import InputError
from app.kinematics.rotations import quat_to_matrix
from app.validation import as_rotation_matrices, as_vectors


def test_rotation_matrices_of_unnormalised_quaternions_are_orthonormal_and_match_the_unit_ones():
    rng = np.random.default_rng(0)
    quat = rng.normal(size=(5, 4)) * rng.uniform(0.1, 10.0, (5, 1))
    R = as_rotation_matrices(quat, "quat")
    unit = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    np.testing.assert_allclose(R, quat_to_matrix(unit), atol=1e-12)
    np.testing.assert_allclose(R @ np.swapaxes(R, 1, 2), np.broadcast_to(np.eye(3), (5, 3, 3)), atol=1e-12)
    assert as_rotation_matrices([1.0, 0, 0, 0], "quat").shape == (3, 3)


@pytest.mark.parametrize("value, message", [([0.0, 0, 0, 0], "zero quaternion"), ([1.0, np.nan, 0, 0], "NaN"),
                                            ([1.0, 0, 0], r"shape \(\.\.\., 4\)"), ("abc", "numeric")])
def test_bad_quaternions_name_the_argument_and_the_problem(value, message):
    with pytest.raises(InputError, match=message) as info:
        as_rotation_matrices(value, "target_quat")
    assert "target_quat" in str(info.value)


def test_vectors_report_the_first_non_finite_entry():
    with pytest.raises(InputError, match=r"index \(1, 2\)"):
        as_vectors([[0.0, 0, 0], [0, 0, np.inf]], "pos", 3)
