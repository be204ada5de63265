"""Joint limits as a one-tick lookahead box; collision rows."""

import numpy as np

from app.ik.limits import CollisionLimit, DistanceRows, JointLimits


def test_joint_limit_box_is_lookahead_intersected_with_velocity(widowx):
    lim = JointLimits(widowx, velocity_scale=0.5)
    q = widowx.mid_config()
    q[1] = widowx.q_lower[1] + 0.001  # 1 mrad above the lower limit
    rows = lim.compute_qp_inequalities(q, dt=0.01)
    np.testing.assert_array_equal(rows.G, np.eye(8))
    np.testing.assert_allclose(rows.lo[1], -0.1)          # (q_min - q) / h
    np.testing.assert_allclose(rows.hi[1], 0.5 * widowx.v_max[1])
    np.testing.assert_allclose(rows.lo[0], -0.5 * widowx.v_max[0])


def test_box_is_never_empty_past_a_limit(widowx):
    lim = JointLimits(widowx)
    q = widowx.mid_config()
    q[2] = widowx.q_upper[2] + 0.5  # far past: lookahead asks for more than the velocity bound
    rows = lim.compute_qp_inequalities(q, dt=0.001)
    assert np.all(rows.lo <= rows.hi)
    assert rows.hi[2] < 0  # must come back
    assert rows.lo[2] >= -widowx.v_max[2] - 1e-12


def test_collision_row_bounds_approach_speed():
    J_a = np.array([[[0.0, 0.0], [0.0, 0.0], [1.0, 0.5]], [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]])
    J_b = np.array([np.zeros((3, 2)), [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]])
    J_b[1, 0, 1] = 2.0  # pair 2: body B moves too (self-collision)
    rows = DistanceRows(np.array([0.05, 0.02]), np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), J_a, J_b,
                        ("tip|table", "a|b"))
    ineq = CollisionLimit(d_safe=0.01, gamma=0.5, rows=rows).compute_qp_inequalities(dt=0.01)
    np.testing.assert_allclose(ineq.G, [[1.0, 0.5], [1.0, -2.0]])
    np.testing.assert_allclose(ineq.lo, [-0.5 * 0.04 / 0.01, -0.5 * 0.01 / 0.01])
    assert CollisionLimit().with_rows(DistanceRows.empty(2)).compute_qp_inequalities(0.01).G.shape == (0, 2)
