"""app.ik.branches: a configuration's closed-form branch is the one whose solution of its own tool pose gives it
back; configurations where two branches meet (joint 4 at a right angle: the wrist singular) are -1; a small move
keeps the branch; an arm outside the family has no branches."""

import numpy as np
import pytest

from app.errors import NotApplicableError
from app.ik.analytic import analytic_ik
from app.ik.branches import branch_of

EE = "ee_gripper_link"


def _random_q(model, n, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = np.maximum(model.q_lower, -3.0), np.minimum(model.q_upper, 3.0)
    return lo + (hi - lo) * rng.random((n, model.n_dofs))


def test_the_branch_of_a_configuration_solves_its_own_pose_back_to_it(widowx):
    q = _random_q(widowx, 200)
    b = branch_of(widowx, EE, q)
    assert (b >= 0).mean() > 0.95  # random configurations are almost never singular
    pos, quat = widowx.forward_kinematics(q, [EE])
    q_arm, valid = analytic_ik(widowx, EE, pos[:, 0], quat[:, 0], q_rest=q[0])
    rows = np.flatnonzero(b >= 0)
    gap = np.abs(np.angle(np.exp(1j * (q_arm[rows, b[rows]] - q[rows][:, :6]))))
    assert gap.max() < 1e-6 and valid[rows, b[rows]].all()


def test_a_small_move_keeps_the_branch_and_a_singular_wrist_is_where_two_meet(widowx):
    q = _random_q(widowx, 50, seed=1)
    b = branch_of(widowx, EE, q)
    moved = branch_of(widowx, EE, q + 1e-3 * np.sign(np.random.default_rng(2).standard_normal(q.shape)))
    both = (b >= 0) & (moved >= 0)
    assert both.sum() > 40 and np.array_equal(b[both], moved[both])
    singular = q.copy()
    singular[:, 4] = np.pi / 2  # joint 4 at a right angle: axis 5 normal to the arm plane, the wrist flips meet
    assert (branch_of(widowx, EE, singular) == -1).all()


def test_an_arm_outside_the_family_has_no_branches(panda):
    with pytest.raises(NotApplicableError, match="no closed form"):
        branch_of(panda, "panda_hand", np.zeros((1, panda.n_dofs)))
