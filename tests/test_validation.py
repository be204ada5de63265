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


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_iters=2.5), r"max_iters: expected an integer, got 2.5"),
    (dict(max_restarts=True), r"max_restarts: expected an integer, got True"),
    (dict(pos_tol=np.nan), r"pos_tol: must be a finite number, got nan"),
    (dict(warn="no"), r"warn: expected bool"),
])
def test_ik_options_check_their_field_types_with_the_config_loaders_conversion(kwargs, message):
    """IKOptions' types are checked by app.validation.check_types (the loader's convert): numpy scalars pass,
    a bool is not an integer, numbers must be finite."""
    from app.ik.solver import IKOptions

    with pytest.raises(InputError, match=message):
        IKOptions(**kwargs)
    options = IKOptions(max_iters=np.int64(7), pos_tol=np.float32(1e-3), warn=np.bool_(False))
    assert (options.max_iters, options.warn) == (7, False)


def test_a_failed_check_names_the_file_and_the_key_path_below_lists():
    """Where(...) joins names and list indices into the key path; raise_first raises the first failed row only."""
    from app.errors import ConfigError
    from app.validation import in_file, raise_first

    at = in_file("run.yaml").sub("task", "motions", 1)
    rows = [(at("radius"), True, "fine"), (at("radius"), False, "must be >= 0 m, got -1"), (at("arm"), False, "x")]
    with pytest.raises(ConfigError, match=r"^run.yaml: task.motions\[1\].radius: must be >= 0 m, got -1$"):
        raise_first(rows)
