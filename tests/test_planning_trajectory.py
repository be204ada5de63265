"""Timing (Ruckig), export for Trossen's driver, and Genesis's plan_path shapes on the WidowX AI."""

import numpy as np
import pytest

from app.errors import InputError
from app.planning import plan, time_parameterize
from app.planning.export import (driver_velocity_limits, read_trajectory, time_for_driver, to_driver, write_csv,
                                 write_npz)
from app.planning.genesis_api import plan_path
from tests.test_planning import setup  # noqa: F401 - the shelf scene's fixture, shared

A_MAX = 4.0


@pytest.fixture(scope="module")
def planned(setup):  # noqa: F811 - the fixture imported above
    widowx, cm, start, goal = setup
    res = plan(widowx, goal, start, collision=cm)
    assert res.success
    return widowx, cm, res, time_for_driver(widowx, res.path, a_max=A_MAX, rate=250.0)


def test_timed_trajectory_respects_velocity_and_acceleration_limits(planned):
    model, _, _, traj = planned
    limits = driver_velocity_limits(model)
    assert (np.abs(traj.qd) <= limits + 1e-9).all()
    assert (np.abs(traj.qdd) <= A_MAX + 1e-9).all()
    assert np.abs(traj.qd).max() > 0.5 * limits.min()  # it does move at speed


def test_timed_trajectory_is_continuous_and_consistent_by_finite_differences(planned):
    """Fixed rate; q, qd, qdd continuous; qd and qdd match the finite differences of q and qd."""
    _, _, res, traj = planned
    dt = 1.0 / traj.rate
    np.testing.assert_allclose(np.diff(traj.t), dt, atol=1e-12)
    np.testing.assert_allclose(np.diff(traj.q, axis=0) / dt, 0.5 * (traj.qd[1:] + traj.qd[:-1]), atol=2e-3)
    np.testing.assert_allclose(np.diff(traj.qd, axis=0) / dt, 0.5 * (traj.qdd[1:] + traj.qdd[:-1]), atol=0.2)
    assert np.abs(np.diff(traj.qdd, axis=0)).max() <= 80.0 * dt + 1e-9  # jerk-limited: no jump in acceleration
    np.testing.assert_allclose(traj.q[0], res.path[0])
    np.testing.assert_allclose(traj.q[-1], res.path[-1], atol=1e-9)
    assert np.abs(traj.qd[[0, -1]]).max() == 0.0


def test_timed_trajectory_stays_on_the_checked_path(planned):
    """Every sample lies on a straight edge of the planned path, so it is as clear as the path."""
    _, cm, res, traj = planned
    a, b = res.path[:-1], res.path[1:]
    d = b - a
    t = np.clip(np.einsum("kne,ne->kn", traj.q[:, None] - a[None], d) / np.maximum((d * d).sum(1), 1e-300), 0, 1)
    gap = np.linalg.norm(traj.q[:, None] - (a[None] + t[..., None] * d[None]), axis=2).min(axis=1)
    assert gap.max() < 1e-6
    assert cm.clear(traj.q, 0.0).all()


CORNER = np.array([[0.0, 0.0], [0.6, 0.0], [1.1, 0.3]])  # two edges turning by 31 degrees


def _on_polyline(path: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each configuration's distance (K,) to the nearest straight edge of ``path``."""
    a, b = path[:-1], path[1:]
    d = b - a
    t = np.clip(np.einsum("kne,ne->kn", q[:, None] - a[None], d) / (d * d).sum(1), 0, 1)
    return np.linalg.norm(q[:, None] - (a[None] + t[..., None] * d[None]), axis=2).min(axis=1)


def test_a_valid_check_lets_the_timing_pass_a_corner_within_the_limits():
    """With a check that allows it, the motion passes the corner without stopping, sooner than stopping there,
    every DOF within its velocity and acceleration limits, continuous, at rest at both ends, and every configuration
    it was timed through (at the check's resolution) was offered to the check."""
    seen = []

    def anything(q):
        seen.append(q)
        return np.ones(len(q), dtype=bool)

    stops = time_parameterize(CORNER, [1.0, 0.8], 4.0, 40.0, rate=500.0)
    passes = time_parameterize(CORNER, [1.0, 0.8], 4.0, 40.0, rate=500.0, valid=anything)
    at_corner = np.argmin(np.linalg.norm(passes.q - CORNER[1], axis=1))
    assert np.linalg.norm(passes.qd[at_corner]) > 0.3 and passes.duration < 0.9 * stops.duration
    assert (np.abs(passes.qd) <= np.array([1.0, 0.8]) + 1e-9).all() and (np.abs(passes.qdd) <= 4.0 + 1e-9).all()
    assert np.abs(np.diff(passes.qdd, axis=0)).max() <= 40.0 / passes.rate + 1e-9
    assert np.abs(passes.qd[[0, -1]]).max() == 0.0 and np.allclose(passes.q[[0, -1]], CORNER[[0, -1]])
    checked = np.concatenate(seen)
    gaps = np.array([np.min(np.abs(checked - q).max(axis=1)) for q in passes.q])
    assert gaps.max() <= 0.001 + 1e-9  # every timed sample within one check step of a checked configuration


def test_where_the_check_refuses_leaving_the_edges_the_timing_stops_on_them():
    """A check that refuses anything off the straight edges: the corner is passed at rest, on the path, exactly
    as without a check."""
    def on_path(q):
        return _on_polyline(CORNER, q) < 1e-9

    stops = time_parameterize(CORNER, [1.0, 0.8], 4.0, 40.0, rate=500.0)
    kept = time_parameterize(CORNER, [1.0, 0.8], 4.0, 40.0, rate=500.0, valid=on_path)
    assert kept.duration == stops.duration and np.allclose(kept.q, stops.q)
    assert _on_polyline(CORNER, kept.q).max() < 1e-9


def test_export_round_trips_names_units_and_rate(planned, tmp_path):
    """CSV and NPZ give back Trossen's names, the rate, units and the values the driver streams."""
    model, _, _, traj = planned
    out = to_driver(model, traj)
    assert out.names == tuple(f"main_joint_{i}" for i in range(7))
    assert out.units == ("rad",) * 6 + ("m",)
    for path in (write_csv(out, tmp_path / "traj.csv"), write_npz(out, tmp_path / "traj.npz")):
        back = read_trajectory(path)
        assert back.names == out.names and back.units == out.units and back.rate == 250.0
        for kind in ("t", "position", "velocity", "acceleration"):
            np.testing.assert_allclose(getattr(back, kind), getattr(out, kind), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.position[:, 6], 0.02)  # the gripper held at its opening
    assert "set_all_positions" in (tmp_path / "traj.csv").read_text().splitlines()[0]


def test_driver_limits_are_published_limits_times_safety_at_most(widowx):
    limits = driver_velocity_limits(widowx, safety=0.5)
    assert (limits[:3] <= 6.28 * 0.5 + 1e-12).all() and (limits[3:6] <= 9.42 * 0.5 + 1e-12).all()
    assert (limits <= widowx.v_max).all()


def test_export_refuses_a_trajectory_faster_than_the_driver_limits(planned):
    model, _, res, _ = planned
    fast = time_parameterize(res.path, 10.0, a_max=100.0, j_max=5000.0, rate=100.0)  # above 6.28 x 0.5
    with pytest.raises(InputError, match="above its limit"):
        to_driver(model, fast, safety=0.5)


def test_time_parameterize_rejects_bad_input():
    with pytest.raises(InputError, match="path"):
        time_parameterize(np.full((3, 2), np.nan), 1.0)
    with pytest.raises(InputError, match="v_max"):
        time_parameterize(np.zeros((3, 2)), [1.0, -1.0])
    with pytest.raises(InputError, match="rate"):
        time_parameterize(np.zeros((3, 2)), 1.0, rate=0.0)
    with pytest.raises(InputError, match="check_resolution"):
        time_parameterize(np.zeros((3, 2)), 1.0, valid=lambda q: np.ones(len(q), bool), check_resolution=0.0)


PATH_WITH_A_TINY_EDGE = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 0.0], [1.0, 0.5, 1e-9], [0.2, 0.1, 0.3]])


@pytest.mark.parametrize("limits", [(1.0, 4.0, 1e300), (1e300, 1e300, 1e300), (1.0, 4.0, 1e6), (10.0, 1e6, 1e9)],
                         ids=["jerk 1e300", "every limit 1e300", "jerk 1e6 over a 1e-9 rad edge", "acceleration 1e6"])
def test_extreme_limits_are_timed_within_them_never_a_ruckig_error(limits):
    """Ruckig refused these (ValueError -101 or RuckigError): limits beyond its numbers, or a tiny edge whose
    per-unit limits were divided by 1e-9. The timing stays within the limits given and ends at the goal."""
    v, a, j = limits
    timed = time_parameterize(PATH_WITH_A_TINY_EDGE, v, a, j, rate=240.0)
    assert np.isfinite(timed.q).all() and np.isfinite(timed.qd).all()
    np.testing.assert_allclose(timed.q[-1], PATH_WITH_A_TINY_EDGE[-1], atol=1e-9)
    assert np.abs(timed.qd).max() <= v * (1 + 1e-6)
    assert np.abs(timed.qdd).max() <= a * (1 + 1e-6)


@pytest.mark.parametrize("limits, words", [
    ((1e-12, 4.0, 40.0), "at least 1.8e[+]12 s"), ((1.0, 1e-12, 40.0), "at least 3.789e[+]06 s"),
    ((1.0, 4.0, 1e-12), "at least 6.125e[+]04 s")], ids=["velocity 1e-12", "acceleration 1e-12", "jerk 1e-12"])
def test_limits_that_would_take_hours_are_refused_before_any_timing(limits, words):
    """Before: a velocity of 1e-12 asked numpy for 437 TiB; an acceleration of 1e-12 ran for ever."""
    with pytest.raises(InputError, match=words + ".*at most 3600 s"):
        time_parameterize(PATH_WITH_A_TINY_EDGE, *limits, rate=60.0)


def test_plan_path_has_genesis_shapes_and_valid_mask(planned):
    model, cm, res, _ = planned
    start, goal = res.path[0], res.path[-1]
    path, ok = plan_path(model, goal, start, collision=cm, return_valid_mask=True)
    assert path.shape == (300, model.n_dofs) and ok is True
    np.testing.assert_allclose(path[[0, -1]], [start, goal], atol=1e-9)
    assert cm.clear(path, 0.0).all()
    paths, oks = plan_path(model, np.array([goal, start]), start, collision=cm, num_waypoints=40,
                                 return_valid_mask=True)
    assert paths.shape == (40, 2, model.n_dofs) and oks.tolist() == [True, True]


def test_plan_path_failure_holds_the_start_and_says_invalid(planned):
    """A failed plan returns the start repeated (not zeros) and a False valid mask."""
    model, cm, res, _ = planned
    start = res.path[0]
    blocked = start.copy()
    blocked[0] = 0.0
    path, ok = plan_path(model, blocked, start, collision=cm, num_waypoints=10, return_valid_mask=True)
    assert ok is False and path.shape == (10, model.n_dofs)
    np.testing.assert_allclose(path, np.broadcast_to(start, path.shape))
    assert plan_path(model, blocked, start, collision=cm, return_result=True).reason == "goal_in_collision"


def test_plan_path_rejects_bad_input(planned):
    model, cm, res, _ = planned
    with pytest.raises(InputError, match="qpos_goal"):
        plan_path(model, np.zeros(3), collision=cm)
    with pytest.raises(InputError, match="num_waypoints"):
        plan_path(model, res.path[-1], res.path[0], collision=cm, num_waypoints=1)
