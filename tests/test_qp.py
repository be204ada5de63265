"""The velocity QP: matrices built without a solver, warm OSQP solves, scaling, failure path."""

import dataclasses

import numpy as np
import pytest

from app import InputError
from app.ik.limits import RowsLimit, VelocityBox
from app.ik.qp import INF, QP, QPSolver, feasible_scale
from app.ik.qp_builder import build_qp
from app.ik.tasks import PostureTask, RowsTask


def _qp(J, V, n, *, w=None, box=None, rows=(), posture=None, posture_weight=1e-3, **kw):
    """One QP from rows J qdot = V, a velocity box (lo, hi), rows (G, lo, hi) and a posture velocity (default
    zero, weight 1e-3: the nullspace is held still) at q = 0."""
    posture = np.zeros(n) if posture is None else posture
    tasks = [RowsTask(J, V, w), PostureTask(q_ref=posture, weight=posture_weight)]
    limits = ([] if box is None else [VelocityBox(*box)]) + [RowsLimit(*r) for r in rows]
    return build_qp(np.zeros(n), tasks=tasks, limits=limits, **kw)[0]


def test_build_qp_matrices_match_the_written_cost():
    rng = np.random.default_rng(0)
    J, V, w = rng.normal(size=(3, 4)), rng.normal(size=3), np.array([1.0, 1.0, 0.1])  # a 1-D nullspace
    qp = _qp(J, V, 4, w=w, box=(-np.ones(4), np.ones(4)), posture=np.ones(4), damping=0.0, n_rows=6)
    x = rng.normal(size=4)
    null = np.linalg.svd(J * w[:, None])[2][-1]  # unit vector spanning the nullspace
    a = qp.scale  # the twist scaled into the box
    cost = 0.5 * np.sum((w * (J @ x - a * V)) ** 2) + 0.5e-3 * (null @ (x - 1)) ** 2
    const = 0.5 * np.sum((a * w * V) ** 2) + 0.5e-3 * (null @ np.ones(4)) ** 2  # terms without x
    np.testing.assert_allclose(0.5 * x @ qp.P @ x + qp.c @ x + const, cost, rtol=1e-6)
    assert qp.A.shape == (6, 4) and np.allclose(qp.P, qp.P.T) and qp.scale == pytest.approx(
        feasible_scale(J * w[:, None], V * w, -np.ones(4), np.ones(4)))
    np.testing.assert_array_equal(qp.A[:4], np.eye(4))
    assert (qp.l[4:] == -INF).all() and (qp.u[4:] == INF).all()  # padding rows are free


def test_feasible_scale_fits_the_least_squares_velocity_into_the_box():
    J, V = np.eye(2), np.array([4.0, -1.0])
    assert feasible_scale(J, V, -np.ones(2), np.ones(2)) == pytest.approx(0.25, rel=1e-5)
    assert feasible_scale(J, np.array([0.5, 0.5]), -np.ones(2), np.ones(2)) == 1.0
    # y is pinned (it may not move in -y): the scale comes from the motion that remains possible
    assert feasible_scale(J, V, np.array([-1.0, 0.0]), np.ones(2)) == pytest.approx(0.25, rel=1e-5)
    # a redundant joint takes over from one pinned at its limit
    J2 = np.array([[1.0, 1.0]])
    assert feasible_scale(J2, np.array([-0.5]), np.array([0.0, -1.0]), np.ones(2)) == 1.0


def test_too_many_rows_is_an_error():
    with pytest.raises(InputError, match="exceed"):
        _qp(np.zeros((1, 3)), np.zeros(1), 3, rows=[(np.eye(3), -np.ones(3), np.ones(3))], n_rows=5)


def _planar_arm_jacobian():
    return np.array([[-0.3, -0.15, -0.05], [0.2, 0.25, 0.1]])


def test_infeasible_twist_is_scaled_along_its_own_direction():
    """Pure velocity bounds: the end-effector velocity keeps the desired direction, its speed shrinks."""
    J, V = _planar_arm_jacobian(), np.array([3.0, 1.0])
    qp = _qp(J, V, 3, box=(-np.ones(3), np.ones(3)), n_rows=3)
    sol = QPSolver(3, 3).solve(qp)
    assert sol.solved and 0.0 < sol.scale < 0.9
    v = J @ sol.qdot
    angle = np.arccos(v @ V / np.linalg.norm(v) / np.linalg.norm(V))
    assert angle < 1e-2
    assert np.all(np.abs(sol.qdot) <= 1 + 1e-5)
    # clamping the unconstrained solution instead bends the direction
    clipped = np.clip(np.linalg.pinv(J) @ V, -1, 1)
    v_clip = J @ clipped
    assert np.arccos(v_clip @ V / np.linalg.norm(v_clip) / np.linalg.norm(V)) > 5 * angle


def test_feasible_twist_is_tracked_exactly():
    J, V = _planar_arm_jacobian(), np.array([0.05, 0.02])
    qp = _qp(J, V, 3, box=(-np.ones(3), np.ones(3)), n_rows=3)
    sol = QPSolver(3, 3).solve(qp)
    assert sol.solved and sol.scale == 1.0
    np.testing.assert_allclose(J @ sol.qdot, V * sol.scale, atol=1e-5)


def test_warm_workspace_matches_fresh_solves_across_updates():
    rng = np.random.default_rng(1)
    warm = QPSolver(4, 4)
    for _ in range(5):
        J, V = rng.normal(size=(3, 4)), rng.normal(size=3)
        box = (-rng.uniform(0.5, 2, 4), rng.uniform(0.5, 2, 4))
        qp = dataclasses.replace(_qp(J, V, 4, box=box, n_rows=4), x_exact=None)
        a, b = warm.solve(qp), QPSolver(4, 4).solve(qp)  # OSQP both times (no unconstrained shortcut)
        assert a.solved and b.solved
        cost = lambda x: 0.5 * x @ qp.P @ x + qp.c @ x  # noqa: E731
        np.testing.assert_allclose(cost(a.qdot), cost(b.qdot), rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(a.qdot, b.qdot, atol=1e-3)  # x itself only to ADMM's precision


def test_infeasible_qp_reports_failure_and_returns_zeros_not_nan():
    A = np.zeros((3, 3))
    A[0, 0] = A[1, 0] = 1.0
    A[2, 2] = 1.0
    qp = QP(np.eye(3), np.zeros(3), A, np.array([1.0, -INF, 0.0]), np.array([INF, -1.0, 1.0]))  # x0 >= 1 and x0 <= -1
    sol = QPSolver(3, 3).solve(qp)
    assert not sol.solved and "infeasible" in sol.status
    np.testing.assert_array_equal(sol.qdot, np.zeros(3))


def test_wrong_size_qp_is_refused():
    with pytest.raises(InputError, match="does not fit"):
        QPSolver(4, 4).solve(QP(np.eye(3), np.zeros(3), np.zeros((4, 3)), np.zeros(4), np.zeros(4)))


def _random_qp(rng, box_halfwidth):
    J, V = rng.normal(size=(3, 4)), rng.normal(size=3)
    box = (-np.full(4, box_halfwidth), np.full(4, box_halfwidth))
    row = (rng.normal(size=(1, 4)), np.array([-1.0]), np.array([INF]))
    return _qp(J, V, 4, box=box, rows=[row], posture=rng.normal(size=4), n_rows=6)


def test_certified_solutions_equal_osqp_with_free_held_and_row_bound_answers():
    rng = np.random.default_rng(3)
    kinds = {"unconstrained": 0, "box held": 0, "row at its bound": 0}
    for k in range(60):
        qp = _random_qp(rng, box_halfwidth=(10.0, 0.5, 0.05)[k % 3])
        reference = QPSolver(4, 6, eps=1e-9).solve(dataclasses.replace(qp, x_exact=None))
        x_free = np.linalg.solve(qp.P, -qp.c)
        sol = QPSolver(4, 6).solve(qp)
        assert sol.solved and qp.x_exact is not None  # every feasible QP here is certified: OSQP never runs
        row_bound = np.isclose(qp.A[4] @ qp.x_exact, qp.l[4], atol=1e-9)
        kinds["unconstrained" if np.allclose(qp.x_exact, x_free, atol=1e-12) else
              "row at its bound" if row_bound else "box held"] += 1
        assert sol.iterations == 0 and np.array_equal(sol.qdot, qp.x_exact)
        np.testing.assert_allclose(qp.x_exact, reference.qdot, atol=1e-5)  # OSQP's own precision
        cost = lambda x: 0.5 * x @ qp.P @ x + qp.c @ x  # noqa: E731
        assert cost(qp.x_exact) <= cost(reference.qdot) + 1e-9  # OSQP may sit 1e-9 outside the rows
        assert np.all(qp.x_exact >= qp.l[:4]) and np.all(qp.x_exact <= qp.u[:4])  # the box exactly
        assert np.all(qp.A @ qp.x_exact >= qp.l - 1e-9) and np.all(qp.A @ qp.x_exact <= qp.u + 1e-9)
    assert min(kinds.values()) >= 5, kinds  # every path was exercised


def test_osqp_runs_and_reports_where_no_answer_is_certified():
    A = np.zeros((3, 3))
    A[0, 0] = A[1, 0] = 1.0
    A[2, 2] = 1.0
    l, u = np.array([1.0, -INF, 0.0]), np.array([INF, -1.0, 1.0])  # x0 >= 1 and x0 <= -1
    qps = build_qp(np.zeros(3), tasks=[RowsTask(np.eye(3), np.ones(3))], limits=[RowsLimit(A, l, u)])
    assert not qps.exact[0]  # infeasible: no certificate, so OSQP runs and says why
    sol = QPSolver(3, 6).solve(qps[0])
    assert not sol.solved and "infeasible" in sol.status


def test_a_joint_resting_at_its_limit_is_solved_exactly_at_the_bound():
    J, V = np.eye(3)[:2], np.array([1.0, 0.2])  # the task asks joint 0 to move up at 1 rad/s
    qp = _qp(J, V, 3, box=(-np.ones(3), np.array([0.0, 1.0, 1.0])), n_rows=3)  # joint 0 is at its upper limit
    assert qp.x_exact is not None
    assert qp.x_exact[0] == 0.0
    np.testing.assert_allclose(qp.x_exact, QPSolver(3, 3, eps=1e-9).solve(dataclasses.replace(qp, x_exact=None)).qdot,
                               atol=1e-6)


def test_osqp_after_certified_ticks_matches_a_fresh_workspace():
    """As the controller runs it: every third tick goes to OSQP, started from the last certified answer."""
    rng = np.random.default_rng(4)
    warm, last = QPSolver(4, 6), None
    for k in range(12):
        qp = _random_qp(rng, box_halfwidth=10.0 if k % 3 else 0.05)
        if k % 3 == 0:
            qp = dataclasses.replace(qp, x_exact=None)
        a = warm.solve(qp, None if qp.x_exact is not None else last)
        b = QPSolver(4, 6).solve(dataclasses.replace(qp, x_exact=None))
        assert a.solved and b.solved and (a.iterations > 0) == (k % 3 == 0)
        np.testing.assert_allclose(a.qdot, b.qdot, atol=2e-3)
        last = a.qdot if qp.x_exact is not None else None


def test_given_rows_go_into_each_environment_own_slots():
    G = np.arange(12.0).reshape(4, 3)
    rows = RowsLimit(G, np.array([1.0, 2.0, 3.0, 4.0]), np.full(4, INF), env=np.array([0, 2, 2, 2]))
    Gp, lo, hi, count = rows.params(3)
    np.testing.assert_array_equal(count, [1, 0, 3])
    np.testing.assert_array_equal(Gp[0, 0], G[0])
    np.testing.assert_array_equal(Gp[2], G[1:])
    np.testing.assert_array_equal(lo[2], [2.0, 3.0, 4.0])
    assert not Gp[1].any() and not Gp[0, 1:].any()
    qps = build_qp(np.zeros((3, 3)), tasks=[RowsTask(np.eye(3), np.ones(3))], limits=[rows])
    np.testing.assert_array_equal(qps.A[2, 3:], G[1:])  # after the box rows, in the QP of environment 2
    with pytest.raises(InputError, match="exceed"):
        build_qp(np.zeros((3, 3)), tasks=[RowsTask(np.eye(3), np.ones(3))], limits=[rows], n_rows=5)


def test_nullspace_projector_equals_the_damped_pseudo_inverse_formula():
    from app.ik.diffik import nullspace_projector

    rng = np.random.default_rng(6)
    for m, n in ((6, 8), (3, 7), (2, 2)):
        J = rng.normal(size=(m, n))
        N = nullspace_projector(J, damping=1e-3)
        expected = np.eye(n) - J.T @ np.linalg.solve(J @ J.T + 1e-6 * np.eye(m), J)
        np.testing.assert_allclose(N, expected, atol=1e-10)
        assert np.abs(J @ N).max() < 1e-5  # motions in N's range leave the task still (to the damping)
