"""PoseIK (the prepared one-link solver behind model.inverse_kinematics) equals the general path."""

import numpy as np
import pytest

from app import InputError
from app.ik.prepared import PoseIK
from app.ik.solver import IKOptions
from tests.conftest import random_configs

EE = "ee_gripper_link"


@pytest.mark.parametrize("masks", [dict(), dict(rot_mask=(False, False, True)), dict(pos_mask=(True, True, False))])
def test_prepared_answers_equal_the_general_multilink_path(widowx, masks):
    q_true = random_configs(widowx, 20, seed=50)
    pos, quat = (a[:, 0] for a in widowx.forward_kinematics(q_true, [EE]))
    init = random_configs(widowx, 20, seed=51)
    fast = PoseIK(widowx, EE, **masks).solve(pos, quat, init)
    general = widowx.inverse_kinematics_multilink([EE], [pos], [quat], init_qpos=init, return_info=True, **masks)
    np.testing.assert_array_equal(fast.q, general.q)
    np.testing.assert_array_equal(fast.err, general.err[:, 0])
    np.testing.assert_array_equal(fast.iters, general.iters)


def test_model_call_builds_one_prepared_solver_and_reuses_it(widowx):
    widowx.solver_cache.clear()
    solvers = lambda: [v for v in widowx.solver_cache.values() if isinstance(v, PoseIK)]  # noqa: E731
    for _ in range(3):
        widowx.inverse_kinematics(EE, [0.3, 0.0, 0.2], [0, 1, 0, 0], pos_tol=1e-5)
    assert len(solvers()) == 1 and solvers()[0].options.pos_tol == 1e-5
    widowx.inverse_kinematics_multilink([EE], [[0.3, 0.0, 0.2]], [[0, 1, 0, 0]], pos_tol=1e-5)
    assert len(solvers()) == 1  # the same problem through the multi-link entry: the same solver


def test_solver_cache_is_bounded(widowx):
    from app.ik.cache import CACHE_SIZE

    widowx.solver_cache.clear()
    for k in range(CACHE_SIZE + 5):
        widowx.inverse_kinematics(EE, [0.3, 0.0, 0.2], [0, 1, 0, 0], seed=k, max_restarts=1)
    assert len(widowx.solver_cache) == CACHE_SIZE


def test_prepared_solver_checks_its_inputs(widowx):
    solver = PoseIK(widowx, EE, options=IKOptions(max_restarts=2))
    with pytest.raises(InputError, match="quat is required"):
        solver.solve([0.3, 0.0, 0.2])
    with pytest.raises(InputError, match="batch shapes"):
        solver.solve(np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (3, 1)))
    with pytest.raises(InputError, match="NaN"):
        solver.solve([0.3, np.nan, 0.2], [1.0, 0, 0, 0])
    result = PoseIK(widowx, EE, rot_mask=(False, False, False)).solve([0.3, 0.0, 0.2])
    assert result.converged and result.q.shape == (8,)


def test_solve_rows_of_checked_arrays_answers_as_solve_links_bit_for_bit(widowx):
    """The controllers' per-tick path (rotation matrices, no argument handling) gives the very same answers."""
    from app.kinematics.rotations import quat_to_matrix

    q_true = random_configs(widowx, 12, seed=60)
    pos, quat = (a[:, 0] for a in widowx.forward_kinematics(q_true, [EE]))
    init = random_configs(widowx, 12, seed=61)
    solver = PoseIK(widowx, EE)
    general = solver.solve_links([pos], [quat], init)
    rot = np.ascontiguousarray(quat_to_matrix(quat)[:, None])
    rows = solver.solve_rows(init, np.ascontiguousarray(pos[:, None]), rot)
    for name in ("q", "err", "converged", "iters", "restarts"):
        np.testing.assert_array_equal(getattr(rows, name), getattr(general, name))
    with pytest.raises(InputError, match="solve_links"):
        PoseIK(widowx, EE, position_only=True).solve_rows(init, pos[:, None], quat_to_matrix(quat)[:, None])


def test_prepared_solver_is_the_one_the_model_call_caches(widowx):
    from app.ik.api import prepared_solver

    widowx.solver_cache.clear()
    widowx.inverse_kinematics(EE, [0.3, 0.0, 0.2], [0, 1, 0, 0], pos_tol=1e-5, rot_mask=(True, True, True))
    held = prepared_solver(widowx, [EE], (True,), (True,), options=dict(pos_tol=1e-5))
    assert [v for v in widowx.solver_cache.values() if isinstance(v, PoseIK)] == [held]
