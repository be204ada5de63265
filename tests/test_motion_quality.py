"""app.quality's motion-quality report: peaks agree with the calculus of known motions, known-violent commands
(a position step, an overspeed, a mode switch that starts far from the arm, an IK branch flip) are flagged with the
right joint, time and quantity, and known-smooth ones (a quintic within the limits) are reported smooth."""

import numpy as np
import pytest

from app.errors import InputError
from app.quality.limits import ACCEL_MAX, JERK_RISE_S, MotionLimits
from app.quality.motion_report import MotionSamples, analyse, summary_line

NAMES = ("j0", "j1")


def limits(velocity=(3.0, 3.0), accel=40.0, jerk=2000.0, effort=(10.0, 10.0)) -> MotionLimits:
    n = len(NAMES)
    return MotionLimits(NAMES, np.array(velocity, float), np.full(n, accel), np.full(n, jerk),
                        np.array(effort, float), "test")


def quintic(distance: float, duration: float, dt: float, hold: float = 0.2) -> np.ndarray:
    """Rest-to-rest quintic of ``distance`` over ``duration``, then held ``hold`` s; (T,) samples dt apart."""
    t = np.arange(0.0, duration + hold + 1e-12, dt)
    s = np.clip(t / duration, 0.0, 1.0)
    return distance * (10 * s**3 - 15 * s**4 + 6 * s**5)


def test_quintic_within_limits_is_smooth_and_its_peaks_match_the_calculus():
    dt, d, T = 1e-3, 1.0, 1.0
    q = np.stack([quintic(d, T, dt), np.zeros(len(quintic(d, T, dt)))], axis=1)
    report = analyse(MotionSamples(dt, q, q_cmd=q), limits())
    assert report["verdict"] == "smooth" and report["first_event"] is None
    sim = report["joints"]["j0"]["simulated"]
    assert sim["velocity_peak"] == pytest.approx(15 / 8 * d / T, rel=1e-3)  # quintic: 1.875 d/T
    assert sim["acceleration_peak"] == pytest.approx(10 * np.sqrt(3) / 3 * d / T**2, rel=1e-2)  # 5.774 d/T^2
    assert sim["jerk_peak"] == pytest.approx(60 * d / T**3, rel=1e-2)  # at the ends: 60 d/T^3
    assert report["peak_ratios"]["simulated_velocity"] == pytest.approx(15 / 8 / 3.0, rel=1e-3)


def test_a_step_in_the_commanded_position_is_flagged_at_its_joint_and_time():
    dt = 1 / 60
    q = np.zeros((60, 2))
    cmd = q.copy()
    cmd[30:, 1] = 0.5  # 0.5 rad in one tick: 30 rad/s against 3 rad/s
    report = analyse(MotionSamples(dt, q, q_cmd=cmd), limits())
    first = report["first_event"]
    assert report["verdict"] == "flagged"
    assert (first["joint"], first["source"], first["t"]) == ("j1", "commanded", pytest.approx(30 * dt))
    assert first["quantity"] == "velocity" and report["events"]["commanded_velocity"] == 1
    assert first["text"].startswith("commanded velocity of j1 ") and "a step one sample cannot follow" in first["text"]


def test_a_command_starting_far_from_the_arm_after_no_command_is_a_step():
    """A mode switch: nothing commanded (NaN) while the arm sat at 0.3 rad, then a position goal at 0: the
    command begins where the arm is not, as a Cartesian-to-joint switch that jerks the real arm."""
    dt = 1 / 100
    q = np.full((40, 2), 0.3)
    cmd = np.full((40, 2), np.nan)
    cmd[20:] = 0.0
    report = analyse(MotionSamples(dt, q, q_cmd=cmd), limits())
    assert report["first_event"]["t"] == pytest.approx(20 * dt)
    assert report["first_event"]["source"] == "commanded"


def test_simulated_overspeed_is_flagged_on_the_simulated_motion():
    dt = 1 / 240
    v = np.zeros((100, 2))
    v[50:60, 0] = 3.5  # beyond 3 rad/s (+2 %)
    q = np.cumsum(v, axis=0) * dt
    report = analyse(MotionSamples(dt, q, v_sim=v), limits(accel=1e9, jerk=1e12))
    first = report["first_event"]
    assert (first["source"], first["quantity"], first["joint"]) == ("simulated", "velocity", "j0")
    assert first["t"] == pytest.approx(50 * dt)
    assert report["joints"]["j0"]["time_at_velocity_limit_s"] == pytest.approx(10 * dt)


def test_within_the_tolerance_a_limit_is_met_not_passed():
    dt = 1 / 240
    v = np.full((50, 2), 3.0 * 1.015)  # 1.5 % over: at the limit
    q = np.cumsum(v, axis=0) * dt
    report = analyse(MotionSamples(dt, q, v_sim=v), limits(accel=1e9, jerk=1e12))
    assert report["verdict"] == "smooth"


def test_effort_at_the_limit_is_flagged_and_timed():
    dt = 0.01
    q = np.zeros((20, 2))
    effort = np.zeros((20, 2))
    effort[5:, 1] = 12.0
    report = analyse(MotionSamples(dt, q, effort=effort), limits())
    assert (report["first_event"]["quantity"], report["first_event"]["joint"]) == ("effort", "j1")
    assert report["joints"]["j1"]["time_at_effort_limit_s"] == pytest.approx(15 * dt)


def test_branch_changes_are_told_through_a_singular_place_or_a_jump_and_not_judged():
    dt = 0.01
    q = np.zeros((10, 2))
    branch = np.array([2, 2, 2, -1, 2, 2, -1, 6, 6, 6, 3, 3])  # -1: where two branches meet
    report = analyse(MotionSamples(dt, q, branch=branch), limits())
    assert report["branch_changes"] == [
        {"t": pytest.approx(7 * dt), "from": 2, "to": 6, "through": "singular place"},
        {"t": pytest.approx(10 * dt), "from": 6, "to": 3, "through": "jump"}]  # left between two samples
    assert report["verdict"] == "smooth"  # the joints did not move: a change of label alone jerks nothing


def test_the_first_event_is_the_earliest_and_at_one_time_the_command_before_the_motion():
    dt = 0.01
    v = np.zeros((50, 2))
    v[20:25, 0] = 4.0  # simulated overspeed from 0.20 s
    cmd = np.zeros((50, 2))
    cmd[40:, 1] = 1.0  # a commanded step at 0.40 s
    report = analyse(MotionSamples(dt, np.cumsum(v, axis=0) * dt, q_cmd=cmd, v_sim=v), limits(accel=1e9, jerk=1e12))
    assert (report["first_event"]["source"], report["first_event"]["t"]) == ("simulated", pytest.approx(0.2))
    q = np.zeros((50, 2))
    q[30:, 0] = 0.5  # the arm and its command jump together at 0.30 s
    report = analyse(MotionSamples(dt, q, q_cmd=q.copy()), limits())
    assert (report["first_event"]["source"], report["first_event"]["t"]) == ("commanded", pytest.approx(0.3))


def test_a_state_that_is_not_finite_is_an_event_and_written_as_no_number():
    dt = 0.01
    q = np.zeros((20, 2))
    q[12:, 0] = np.nan  # the simulation blew up at 0.12 s
    report = analyse(MotionSamples(dt, q, q_cmd=np.full((20, 2), np.nan)), limits())
    first = report["first_event"]
    assert (first["quantity"], first["joint"], first["t"]) == ("non_finite", "j0", pytest.approx(0.12))
    assert report["verdict"] == "flagged" and report["joints"]["j0"]["simulated"]["velocity_peak"] == 0.0


def test_samples_of_the_wrong_shape_or_step_are_refused():
    with pytest.raises(InputError, match=r"q_sim must have shape \(T, 2\)"):
        analyse(MotionSamples(0.01, np.zeros((5, 3))), limits())
    with pytest.raises(InputError, match="dt must be"):
        analyse(MotionSamples(0.0, np.zeros((5, 2))), limits())
    with pytest.raises(InputError, match="q_cmd must have q_sim's shape"):
        analyse(MotionSamples(0.01, np.zeros((5, 2)), q_cmd=np.zeros((4, 2))), limits())


def test_summary_line_counts_smooth_and_first_causes():
    dt = 0.01
    smooth = analyse(MotionSamples(dt, np.zeros((10, 2))), limits())
    cmd = np.zeros((10, 2))
    cmd[5:, 0] = 1.0
    flagged = analyse(MotionSamples(dt, np.zeros((10, 2)), q_cmd=cmd), limits())
    line = summary_line([smooth, flagged, flagged])
    assert line.startswith("motion: 1/3 smooth; flagged first by commanded ")
    assert line.endswith(" 2")


def test_the_widowx_ai_limits_come_from_its_description(widowx):
    lim = MotionLimits.of_model(widowx)
    np.testing.assert_allclose(lim.velocity, widowx.v_max)
    assert np.all(lim.acceleration == ACCEL_MAX) and np.all(lim.jerk == ACCEL_MAX / JERK_RISE_S)
    assert "none documented" in lim.source
    with pytest.raises(InputError, match="accel_max must be > 0"):
        MotionLimits.of_model(widowx, accel_max=0.0)


def test_live_flags_name_what_the_newest_sample_passes_until_taken_and_not_across_a_restart():
    from app.quality.live_flags import LiveFlags

    dt = 0.01
    live = LiveFlags(limits(), 2, dt)
    q = np.zeros((2, 2))
    live.reset([0, 1], q, q)
    for _ in range(3):
        live.update(q, q, q)
    assert live.take() == ("", "")
    cmd = q.copy()
    cmd[1, 1] = 0.5  # environment 1's command jumps 0.5 rad in one sample
    live.update(q, q, cmd)
    flags = live.take()
    assert flags[0] == "" and flags[1].startswith("velocity j1 ")
    assert live.take() == ("", "")  # taken: cleared
    far = q.copy()
    far[0] = 2.0  # environment 0 restarts far away: no difference across its restart
    live.reset([0], far, q)
    live.update(far, q, None)
    assert live.take()[0] == ""
