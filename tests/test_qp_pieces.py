"""The QP from any number of tasks and limits: every piece enters (summed or stacked), pieces that cannot be
combined are an error naming both, and the QP controller tracks every link a motion gives."""

import numpy as np
import pytest

from app import RobotModel
from app.errors import IncompatibleError
from app.ik.limits import CollisionLimit, DistanceRows, JointLimits, RowsLimit, VelocityBox
from app.ik.qp_builder import build_qp
from app.ik.tasks import FrameTask, PostureTask
from tests.conftest import WIDOWX_URDF

TIPS = ("left_fingertip", "right_fingertip")
EE = "ee_gripper_link"


def _targets(model, q, links):
    pos, quat = model.forward_kinematics(q, list(links))
    return pos, quat


def test_two_frame_tasks_both_enter_the_cost_as_the_sum_of_their_weighted_rows(widowx):
    """P and c equal sum_k J_k^T W_k^2 J_k and -sum_k J_k^T W_k^2 gain_k e_k, each task's own error and Jacobian."""
    rng = np.random.default_rng(1)
    q = widowx.mid_config() + rng.normal(scale=0.2, size=(3, widowx.n_dofs))
    pos, quat = _targets(widowx, widowx.clip(q + 0.1), TIPS)
    tasks = [FrameTask(widowx, TIPS[0], gain=5.0, rot_mask=(False, False, True)),
             FrameTask(widowx, TIPS[1], gain=9.0, weight=2.0)]
    for k, task in enumerate(tasks):
        task.set_target(pos[:, k], quat[:, k])
    both, second = build_qp(q, tasks=tasks, damping=0.0), build_qp(q, tasks=tasks[1:], damping=0.0)
    P, c = np.zeros_like(both.P), np.zeros_like(both.c)
    for task in tasks:
        err, J = task.compute_error_and_jacobian(q)
        w2 = task.row_weights() ** 2
        P += np.einsum("bri,r,brj->bij", J, w2, J)
        c -= np.einsum("bri,r,br->bi", J, w2, task.gain * err)
    np.testing.assert_allclose(both.P, P, atol=1e-9)
    np.testing.assert_allclose(both.c, c, atol=1e-9)
    assert not np.allclose(both.P, second.P)  # the first task is not dropped
    assert both.task_error.shape == (3, 2, 6) and second.task_error.shape == (3, 1, 6)
    np.testing.assert_allclose(both.task_error[:, 0], tasks[0].compute_error(q), atol=1e-12)


def test_several_limits_of_one_kind_are_intersected_and_stacked(widowx):
    """Two joint boxes give their intersection, two velocity boxes theirs, two row sets both sets."""
    n = widowx.n_dofs
    q = widowx.mid_config()[None] + 0.3
    v = np.full((1, n), 0.5)
    loose, tight = JointLimits(widowx, 1.0, 40.0), JointLimits(widowx, 0.3, None)
    qp = build_qp(q, v, limits=[loose, tight], dt=0.01)
    a, b = (lim.compute_qp_inequalities(q, 0.01, v) for lim in (loose, tight))
    np.testing.assert_allclose(qp.l[0, :n], np.maximum(a.lo, b.lo)[0])
    np.testing.assert_allclose(qp.u[0, :n], np.minimum(a.hi, b.hi)[0])
    boxes = [VelocityBox(-np.ones(n), np.ones(n)), VelocityBox(np.full(n, -2.0), np.full(n, 0.5))]
    qp = build_qp(np.zeros(n), limits=boxes)
    np.testing.assert_allclose(qp.l[0, :n], -1.0)
    np.testing.assert_allclose(qp.u[0, :n], 0.5)
    rows = [RowsLimit(np.eye(n)[:2], -np.ones(2), np.ones(2)), RowsLimit(np.eye(n)[2:3], [-3.0], [3.0])]
    qp = build_qp(np.zeros((2, n)), limits=rows)
    np.testing.assert_allclose(qp.A[:, n:n + 3], np.tile(np.eye(n)[:3], (2, 1, 1)))
    np.testing.assert_allclose(qp.u[:, n:n + 3], [[1.0, 1.0, 3.0]] * 2)
    far, near = (DistanceRows(np.array([d]), np.array([[0.0, 0.0, 1.0]]), np.eye(n)[None, :3] * k, np.zeros((1, 3, n)))
                 for d, k in ((0.05, 1.0), (0.03, 2.0)))
    limits = [CollisionLimit(0.01, rows=far), CollisionLimit(0.01, rows=near)]
    qp = build_qp(np.zeros(n), limits=limits, dt=0.01)[0]
    for row, (d, limit) in zip((n, n + 1), ((0.03, limits[1]), (0.05, limits[0]))):  # closest first, both kept
        ineq = limit.compute_qp_inequalities(0.01)
        np.testing.assert_allclose(qp.A[row], ineq.G[0])
        assert qp.l[row] == pytest.approx(-0.05 * (d - 0.01) / 0.01)


def test_two_postures_are_summed_into_the_cost():
    """1/2 x^T P x + c^T x differs from the sum of the two posture costs by a constant."""
    rng = np.random.default_rng(2)
    n = 4
    J = rng.normal(size=(2, n))
    from app.ik.tasks import RowsTask

    tasks = [RowsTask(J, np.zeros(2)), PostureTask(q_ref=np.ones(n), gain=2.0, weight=0.1),
             PostureTask(q_ref=-np.arange(n, dtype=float), gain=0.5, weight=0.3)]
    q = rng.normal(size=n)
    qp = build_qp(q, tasks=tasks, damping=0.0)[0]
    N = np.eye(n) - np.linalg.pinv(J) @ J
    costs = []
    for x in rng.normal(size=(3, n)):
        ref = 0.5 * np.sum((J @ x) ** 2) + sum(0.5 * w * np.sum((N @ (x - g * (r - q))) ** 2)
                                               for r, g, w in ((np.ones(n), 2.0, 0.1), (-np.arange(n), 0.5, 0.3)))
        costs.append(0.5 * x @ qp.P @ x + qp.c @ x - ref)
    np.testing.assert_allclose(costs, costs[0], atol=1e-6)


def test_pieces_that_cannot_be_combined_are_an_error_naming_both(widowx):
    other = RobotModel.from_urdf(str(WIDOWX_URDF))
    a, b = FrameTask(widowx, EE), FrameTask(other, EE)
    for task in (a, b):
        task.set_target(np.zeros(3), None)
    with pytest.raises(IncompatibleError, match="two robot models") as info:
        build_qp(widowx.mid_config(), tasks=[a, b])
    assert info.value.first is a and info.value.second is b
    n = widowx.n_dofs
    boxes = [VelocityBox(-np.ones(n), -0.5 * np.ones(n)), VelocityBox(np.zeros(n), np.ones(n))]
    with pytest.raises(IncompatibleError, match="do not overlap"):
        build_qp(np.zeros(n), limits=boxes)
    rows = DistanceRows(np.array([0.05]), np.array([[0.0, 0.0, 1.0]]), np.ones((1, 3, n)), np.zeros((1, 3, n)))
    with pytest.raises(IncompatibleError, match="d_safe"):
        build_qp(np.zeros(n), limits=[CollisionLimit(0.01, rows=rows), CollisionLimit(0.02, rows=rows)])
    with pytest.raises(Exception, match="not a QP task"):
        build_qp(np.zeros(n), tasks=[boxes[0]])


def test_one_builder_reused_with_different_numbers_of_tasks_builds_each_right(widowx):
    """A reused builder (a controller's) calls the compiled code for each number of frame tasks it is given."""
    from app.ik.qp_builder import QPBuilder

    q = np.tile(widowx.mid_config(), (2, 1))
    tasks = [FrameTask(widowx, link) for link in TIPS]
    for task in tasks:
        task.set_target(np.tile([0.3, 0.0, 0.2], (2, 1)), None)
    builder = QPBuilder(widowx.n_dofs)
    for chosen in (tasks[:1], tasks, [], tasks[:1]):
        got, want = builder.build(q, None, chosen, [], 0.01), build_qp(q, tasks=chosen, dt=0.01)
        np.testing.assert_array_equal(got.P, want.P)
        assert got.task_error.shape == (2, len(chosen), 6)
