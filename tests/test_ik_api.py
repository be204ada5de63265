"""Pose IK through the public API: round trips checked by FK, masks, multi-link, batches, bad input."""

import logging

import numpy as np
import pytest

from app import InputError, UnknownNameError
from app.kinematics.rotations import quat_conjugate, quat_exp, quat_log, quat_multiply, quat_to_matrix
from tests.conftest import random_configs

EE = "ee_gripper_link"


def _angle(q1, q2):
    return np.linalg.norm(quat_log(quat_multiply(q1, quat_conjugate(q2))), axis=-1)


def _assert_within_limits(model, q):
    assert np.all(q >= model.q_lower) and np.all(q <= model.q_upper)
    assert np.isfinite(q).all()


def _fk_targets(model, link, n, seed):
    q = random_configs(model, n, seed)
    pos, quat = model.forward_kinematics(q, [link])
    return pos[:, 0], quat[:, 0]


@pytest.mark.parametrize("robot, link", [("widowx", EE), ("panda", "panda_hand")])
def test_round_trip_fk_ik_fk_on_random_reachable_targets(robot, link, request):
    model = request.getfixturevalue(robot)
    pos, quat = _fk_targets(model, link, 200, seed=10)
    info = model.inverse_kinematics(link, pos, quat, return_info=True)
    assert info.converged.all()
    _assert_within_limits(model, info.q)
    pos_fk, quat_fk = model.forward_kinematics(info.q, [link])
    assert np.linalg.norm(pos_fk[:, 0] - pos, axis=-1).max() <= 1e-4
    assert _angle(quat_fk[:, 0], quat).max() <= 1e-3


def test_return_error_equals_target_minus_fk(widowx):
    pos, quat = np.array([0.35, 0.05, 0.2]), np.array([0.0, 1.0, 0.0, 0.0])
    q, err = widowx.inverse_kinematics(EE, pos, quat, return_error=True, pos_tol=1e-2, rot_tol=1e-1)
    pos_fk, quat_fk = widowx.forward_kinematics(q, [EE])
    assert err.shape == (6,) and q.shape == (8,)
    np.testing.assert_allclose(err[:3], pos - pos_fk[0], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(err[3:]), _angle(quat_fk[0], quat), atol=1e-9)


def test_rot_mask_single_axis_aligns_z_and_leaves_heading_free(widowx):
    pos, quat = _fk_targets(widowx, EE, 50, seed=11)
    spin = quat_exp(np.array([0.0, 0.0, 1.3]))  # turn every target about its own z axis
    info = widowx.inverse_kinematics(EE, pos, quat_multiply(quat, spin), rot_mask=(False, False, True), return_info=True)
    assert info.converged.all()
    _, quat_fk = widowx.forward_kinematics(info.q, [EE])
    z_fk, z_target = quat_to_matrix(quat_fk[:, 0])[..., 2], quat_to_matrix(quat)[..., 2]
    assert np.arccos(np.clip(np.sum(z_fk * z_target, -1), -1, 1)).max() <= 1e-3
    x_fk, x_spun = quat_to_matrix(quat_fk[:, 0])[..., 0], quat_to_matrix(quat_multiply(quat, spin))[..., 0]
    assert np.abs(np.sum(x_fk * x_spun, -1) - 1).max() > 1e-2  # heading not forced to the spun target


def test_pos_mask_ignores_unconstrained_world_axis(widowx):
    info = widowx.inverse_kinematics(EE, [0.3, 0.1, 5.0], None, pos_mask=(True, True, False), return_info=True)
    assert info.converged
    pos_fk, _ = widowx.forward_kinematics(info.q, [EE])
    np.testing.assert_allclose(pos_fk[0, :2], [0.3, 0.1], atol=1e-4)
    assert info.err[2] == 0.0


def test_multilink_fingertips_reach_both_targets_with_fingers_moving(widowx):
    links = ["left_fingertip", "right_fingertip"]
    q_true = random_configs(widowx, 40, seed=12)
    pos, quat = widowx.forward_kinematics(q_true, links)
    info = widowx.inverse_kinematics_multilink(links, [pos[:, 0], pos[:, 1]], [quat[:, 0], quat[:, 1]],
                                               rot_mask=(False, False, True), return_info=True)
    assert info.converged.all() and info.pos_err.shape == (40, 2)
    pos_fk, _ = widowx.forward_kinematics(info.q, links)
    assert np.abs(pos_fk - pos).max() <= 1e-4
    gap = np.linalg.norm(pos[:, 0] - pos[:, 1], axis=-1)
    np.testing.assert_allclose(info.q[:, 6] + info.q[:, 7], gap, atol=1e-3)  # the prismatic fingers did the work


def test_batched_call_equals_per_target_calls(widowx):
    pos, quat = _fk_targets(widowx, EE, 12, seed=13)
    batched = widowx.inverse_kinematics(EE, pos, quat, return_info=True)
    for i in range(12):
        single = widowx.inverse_kinematics(EE, pos[i], quat[i], return_info=True)
        np.testing.assert_array_equal(single.q, batched.q[i])
        assert single.iters == batched.iters[i] and single.restarts == batched.restarts[i]


def test_same_inputs_and_seed_give_bit_identical_output(widowx):
    pos, quat = _fk_targets(widowx, EE, 30, seed=14)
    a = widowx.inverse_kinematics(EE, pos, quat, seed=3, max_iters=10)
    b = widowx.inverse_kinematics(EE, pos, quat, seed=3, max_iters=10)
    np.testing.assert_array_equal(a, b)


def test_shared_target_broadcasts_against_batched_init_qpos(widowx):
    init = random_configs(widowx, 5, seed=15)
    q = widowx.inverse_kinematics(EE, [0.3, 0.0, 0.25], [0, 1, 0, 0], init_qpos=init)
    assert q.shape == (5, 8)


def test_target_rotated_by_pi_from_the_start_converges(widowx):
    q0 = np.array([0.3, 1.2, 1.0, 0.2, 0.3, 0.0, 0.01, 0.01])
    pos, quat = widowx.forward_kinematics(q0, [EE])
    flipped = quat_multiply(quat[0], np.array([0.0, 1.0, 0.0, 0.0]))  # pi about the tool x axis
    info = widowx.inverse_kinematics(EE, pos[0], flipped, init_qpos=q0, return_info=True)
    assert info.converged and abs(abs(info.q[5]) - np.pi) < 1e-3


def test_singular_stretched_start_converges(widowx, kuka):
    stretched = np.array([0.0, np.pi / 2, widowx.q_upper[2], 0.0, 0.0, 0.0, 0.0, 0.0])
    pos, quat = _fk_targets(widowx, EE, 20, seed=16)
    assert widowx.inverse_kinematics(EE, pos, quat, init_qpos=stretched, return_info=True).converged.all()
    pos, quat = _fk_targets(kuka, "lbr_iiwa_link_7", 20, seed=16)  # q = 0: every axis aligned
    assert kuka.inverse_kinematics("lbr_iiwa_link_7", pos, quat, init_qpos=np.zeros(7), return_info=True).converged.all()


def test_unreachable_target_reports_failure_with_best_effort_in_limits(widowx, caplog):
    with caplog.at_level(logging.WARNING):
        info = widowx.inverse_kinematics(EE, [[2.0, 0, 0.3], [0.3, 0, 0.2]], [0, 1, 0, 0], return_info=True)
    assert info.converged.tolist() == [False, True]
    assert "1 of 2" in caplog.text
    _assert_within_limits(widowx, info.q)
    assert 1.1 < info.pos_err[0] < 1.6  # best effort: as close as the arm reaches (~0.77 m)
    assert info.iters[0] <= 51 * 60


def test_warm_start_near_solution_converges_in_a_handful_of_iterations(widowx):
    q_true = random_configs(widowx, 50, seed=17)
    q_true[:, :6] = np.clip(q_true[:, :6], widowx.q_lower[:6] + 0.06, widowx.q_upper[:6] - 0.06)
    pos, quat = widowx.forward_kinematics(q_true, [EE])
    offset = np.random.default_rng(0).uniform(-0.05, 0.05, q_true.shape)
    info = widowx.inverse_kinematics(EE, pos[:, 0], quat[:, 0], init_qpos=q_true + offset, return_info=True,
                                     pos_tol=1e-6, rot_tol=1e-6)
    assert info.converged.all() and info.iters.max() <= 6 and (info.restarts == 0).all()


def test_dofs_idx_holds_other_dofs_at_init(widowx):
    init = widowx.mid_config()
    init[6:] = [0.01, 0.03]
    pos, quat = _fk_targets(widowx, EE, 10, seed=18)
    info = widowx.inverse_kinematics(EE, pos, quat, init_qpos=init, dofs_idx=list(range(6)), return_info=True)
    assert info.converged.all()
    np.testing.assert_array_equal(info.q[:, 6:], np.tile([0.01, 0.03], (10, 1)))
    q = widowx.inverse_kinematics(EE, [0.3, 0.0, 0.3], None, dofs_idx=[1, 2, 3])
    np.testing.assert_array_equal(q[[0, 4, 5, 6, 7]], widowx.mid_config()[[0, 4, 5, 6, 7]])


def test_init_qpos_outside_limits_is_clipped(widowx):
    init = widowx.mid_config() + 10.0
    q = widowx.inverse_kinematics(EE, [0.3, 0.0, 0.3], None, init_qpos=init, dofs_idx=[7])
    np.testing.assert_array_equal(q[:7], widowx.q_upper[:7])


def test_non_unit_quaternion_is_normalised(widowx):
    a = widowx.inverse_kinematics(EE, [0.3, 0.0, 0.2], [0, 1, 0, 0])
    b = widowx.inverse_kinematics(EE, [0.3, 0.0, 0.2], [0, 3, 0, 0])
    np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(pos=np.zeros((2, 3)), quat=np.tile([1.0, 0, 0, 0], (3, 1))), "batch shapes"),
    (dict(pos=[0.3, np.nan, 0.2]), "NaN or inf"),
    (dict(pos=[0.3, 0.0, 0.2], quat=[0, 0, 0, 0]), "zero quaternion"),
    (dict(pos=[0.3, 0.0], quat=None), r"shape \(\.\.\., 3\)"),
    (dict(pos=[0.3, 0.0, 0.2], rot_mask=(True, False)), "rot_mask must be 3 booleans"),
    (dict(pos=[0.3, 0.0, 0.2], quat=None, pos_mask=(False, False, False)), "nothing to solve"),
    (dict(pos=[0.3, 0.0, 0.2], init_qpos=np.zeros(5)), r"init_qpos must have shape \(\.\.\., 8\)"),
    (dict(pos=[0.3, 0.0, 0.2], init_qpos=np.zeros((2, 8)), quat=np.tile([1.0, 0, 0, 0], (3, 1))), "batch shapes"),
    (dict(pos=[0.3, 0.0, 0.2], dofs_idx=[9]), "out of range"),
    (dict(pos=[0.3, 0.0, 0.2], dofs_idx=[]), "non-empty"),
    (dict(pos=[0.3, 0.0, 0.2], tolerance=1e-3), "unknown IK option"),
    (dict(pos=[0.3, 0.0, 0.2], pos_tol=-1.0), "pos_tol must be > 0"),
])
def test_bad_input_raises_input_error(widowx, kwargs, message):
    with pytest.raises(InputError, match=message):
        widowx.inverse_kinematics(EE, **kwargs)


def test_multilink_length_mismatch_and_unknown_link(widowx):
    with pytest.raises(InputError, match=r"one entry per link \(2\) or be empty, got 1"):
        widowx.inverse_kinematics_multilink(["left_fingertip", "right_fingertip"], [[0.3, 0, 0.2]], None)
    with pytest.raises(UnknownNameError, match="valid link names"):
        widowx.inverse_kinematics("hand", [0.3, 0, 0.2])


def test_batch_of_three_targets_is_not_mistaken_for_a_matrix(widowx):
    pos, quat = _fk_targets(widowx, EE, 3, seed=19)  # pos has shape (3, 3)
    info = widowx.inverse_kinematics(EE, pos, quat, return_info=True)
    assert info.q.shape == (3, 8) and info.converged.all()
    np.testing.assert_allclose(widowx.forward_kinematics(info.q, [EE])[0][:, 0], pos, atol=1e-4)


def test_result_does_not_depend_on_thread_count(widowx, monkeypatch):
    import app.kernels.dispatch as threads

    pos, quat = _fk_targets(widowx, EE, 40, seed=20)
    results = []
    for n in ("1", "2", "3"):
        monkeypatch.setenv("APP_THREADS", n)
        monkeypatch.setattr(threads, "_pool", None)  # a pool of the new size
        results.append(widowx.inverse_kinematics(EE, pos, quat, rot_mask=(False, False, True), return_info=True))
    for other in results[1:]:
        np.testing.assert_array_equal(other.q, results[0].q)
        np.testing.assert_array_equal(other.iters, results[0].iters)


@pytest.mark.parametrize("pos", [[1e6, -1e6, 1e6], [0.0, 0.0, 0.05725]])  # absurdly far; on joint 0's axis
def test_degenerate_targets_give_finite_answers_within_limits(widowx, pos):
    info = widowx.inverse_kinematics(EE, pos, [0, 1, 0, 0], return_info=True, max_restarts=3)
    assert np.isfinite(info.q).all() and np.isfinite(info.err).all()
    _assert_within_limits(widowx, info.q)
