"""app.sim.hard_stops: a joint past a limit goes back onto it with its outward velocity gone, and is counted."""

import numpy as np

from app.sim.hard_stops import HardStops


def test_a_joint_past_a_limit_is_put_on_it_its_outward_velocity_dropped_and_counted():
    stops = HardStops(np.array([-1.0, 0.0, -np.inf]), np.array([1.0, 0.04, np.inf]), n_envs=3)
    q = np.array([[1.2, 0.02, 50.0], [0.5, -0.01, -50.0], [0.0, 0.0, 0.0]])
    v = np.array([[2.0, 0.1, 3.0], [-1.0, -0.5, -3.0], [0.3, 0.0, 0.0]])
    changed = stops.hold(q, v)
    assert changed.tolist() == [0, 1]
    np.testing.assert_array_equal(q, [[1.0, 0.02, 50.0], [0.5, 0.0, -50.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(v, [[0.0, 0.1, 3.0], [-1.0, 0.0, -3.0], [0.3, 0.0, 0.0]])
    assert stops.hits.tolist() == [1, 1, 0]


def test_an_inward_velocity_at_a_stop_is_kept_and_joints_within_their_limits_are_untouched():
    stops = HardStops(np.array([0.0]), np.array([1.0]), n_envs=2)
    q, v = np.array([[1.5], [0.5]]), np.array([[-0.2], [4.0]])
    assert stops.hold(q, v).tolist() == [0]
    np.testing.assert_array_equal(v, [[-0.2], [4.0]])
    np.testing.assert_array_equal(q, [[1.0], [0.5]])
    assert stops.hold(q, v).size == 0 and stops.hits.tolist() == [1, 0]
