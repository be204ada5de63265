"""Multi-link IK over links on chains that share no free DOF: solved as independent sub-problems (app.ik.chains),
merged into one answer of the usual shape; on the Stationary AI (two WidowX AI arms) judged by PyBullet's FK."""

import numpy as np
import pytest

from app import RobotModel
from app.ik.chains import chain_model
from app.ik.prepared import IKProblem, PoseIK
from app.kinematics.rotations import quat_to_matrix
from app.sim.urdf_loader import load_urdf
from tests.conftest import REFERENCE, random_configs
from tests.pb_truth import link_frame, set_config

DUAL = REFERENCE / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
EES = ["follower_left_ee_gripper_link", "follower_right_ee_gripper_link"]
STRICT = dict(pos_tol=1e-5, rot_tol=1e-5)


@pytest.fixture(scope="module")
def dual() -> RobotModel:
    if not DUAL.is_file():
        pytest.skip(f"reference data absent: {DUAL} (needs ../shared beside the checkout)")
    return RobotModel.from_urdf(str(DUAL), package_dirs=[str(REFERENCE)])


def _targets(model, n, seed, links=EES):
    pos, quat = model.forward_kinematics(random_configs(model, n, seed), links)
    return list(pos.transpose(1, 0, 2)), list(quat.transpose(1, 0, 2))


def test_both_end_effectors_reach_fk_targets_as_pybullet_sees_them(dual, pb_client):
    """Targets from FK of random in-limit configurations; every answer within 1e-5 m and 1e-5 rad by PyBullet."""
    poss, quats = _targets(dual, 48, seed=3)
    info = dual.inverse_kinematics_multilink(EES, poss, quats, **STRICT, return_info=True)
    assert info.q.shape == (48, 16) and info.err.shape == (48, 2, 6) and info.pos_err.shape == (48, 2)
    assert info.converged.all()
    body = load_urdf(pb_client, str(DUAL), package_dirs=[str(REFERENCE)])
    for i, q in enumerate(info.q):
        assert np.all(q >= dual.q_lower) and np.all(q <= dual.q_upper)
        set_config(pb_client, body, dual, q)
        for k, link in enumerate(EES):
            p, R = link_frame(pb_client, body, link)
            assert np.linalg.norm(p - poss[k][i]) <= 1e-5
            R_err = quat_to_matrix(quats[k][i]).T @ R
            assert np.arccos(np.clip((np.trace(R_err) - 1.0) / 2.0, -1.0, 1.0)) <= 1e-5


def test_split_batch_equals_per_target_calls_bit_for_bit(dual):
    poss, quats = _targets(dual, 6, seed=4)
    q0 = random_configs(dual, 6, seed=5)
    batched = dual.inverse_kinematics_multilink(EES, poss, quats, init_qpos=q0, return_info=True, max_restarts=3)
    for i in range(6):
        one = dual.inverse_kinematics_multilink(EES, [p[i] for p in poss], [x[i] for x in quats], init_qpos=q0[i],
                                                return_info=True, max_restarts=3)
        for name in ("q", "err", "converged", "iters", "restarts"):
            np.testing.assert_array_equal(getattr(one, name), getattr(batched, name)[i])


def test_the_split_answer_holds_other_dofs_and_reports_each_link_from_fk(dual):
    """The fingers (on no chain to an end effector) stay at init_qpos; err is FK's residual of the merged answer."""
    poss, quats = _targets(dual, 8, seed=6)
    q0 = random_configs(dual, 8, seed=7)
    q, err = dual.inverse_kinematics_multilink(EES, poss, quats, init_qpos=q0, return_error=True)
    fingers = [i for i, name in enumerate(dual.dof_names) if "carriage" in name]
    np.testing.assert_array_equal(q[:, fingers], q0[:, fingers])
    pos, _ = dual.forward_kinematics(q, EES)
    for k in range(2):
        np.testing.assert_allclose(err[:, k, :3], poss[k] - pos[:, k], atol=1e-12)


def test_each_arm_is_solved_on_its_own_chain_with_its_closed_form(dual):
    solver = PoseIK(dual, IKProblem(tuple(EES), (True, True), (True, True)))
    groups = solver._groups
    assert [g.targets for g, _ in groups] == [(0,), (1,)]
    for (group, sub), side in zip(groups, ("left", "right")):
        assert group.model.n_dofs == 6 and all(side in dual.dof_names[k] for k in group.dofs)
        assert sub._arm is not None  # the sub-problem is seeded by the WidowX family's closed form


def test_links_that_share_dofs_are_solved_together(dual):
    """The two fingertips of one arm share the arm's DOFs: one problem, as before."""
    tips = ["follower_left_carriage_left", "follower_left_carriage_right"]
    assert PoseIK(dual, IKProblem(tuple(tips), (True, True), (False, False)))._groups is None
    chain, dofs = chain_model(dual, [dual.link_index(t) for t in tips])
    assert chain.n_dofs == 8 and list(dofs) == list(range(8))


def test_a_split_problem_takes_masks_dofs_and_partial_targets(dual):
    """dofs_idx_local picks the left arm's first three DOFs and the right arm's six; the left link has a position
    only: every constrained part is met, the DOFs not given stay put."""
    poss, quats = _targets(dual, 4, seed=8)
    dofs = [0, 1, 2, 8, 9, 10, 11, 12, 13]
    q0 = random_configs(dual, 4, seed=8)  # the targets' own configurations, the given DOFs moved to mid-range
    q0[:, dofs] = dual.mid_config()[dofs]
    info = dual.inverse_kinematics_multilink(EES, poss, [None, quats[1]], init_qpos=q0, dofs_idx_local=dofs,
                                             return_info=True)
    assert info.converged.all(), info.pos_err
    held = [k for k in range(16) if k not in dofs]
    np.testing.assert_array_equal(info.q[:, held], q0[:, held])
    assert np.all(info.err[:, 0, 3:] == 0.0)  # no orientation asked of the left link


def test_solve_rows_of_the_split_problem_equals_solve_links_bit_for_bit(dual):
    """Two arms (independent chains) through the controllers' per-tick path: the same merged answer."""
    poss, quats = _targets(dual, 5, seed=8)
    q0 = random_configs(dual, 5, seed=9)
    solver = PoseIK(dual, IKProblem(tuple(EES), (True, True), (True, True)))
    assert solver._groups is not None
    general = solver.solve_links(poss, quats, q0)
    pos = np.ascontiguousarray(np.stack(poss, axis=1))
    rot = np.ascontiguousarray(np.stack([quat_to_matrix(x) for x in quats], axis=1))
    rows = solver.solve_rows(q0, pos, rot)
    for name in ("q", "err", "converged", "iters", "restarts"):
        np.testing.assert_array_equal(getattr(rows, name), getattr(general, name))
