"""The pose-IK controller's jerk-shaped joint step (app.control.joint_step.JerkShaper, app.control.jerk_window): a
motor that follows its velocity command exactly is driven towards step, ramp and out-of-reach goals, and the commanded
motion keeps the acceleration and jerk bounds, the velocity and position limits, reaches the goal without ringing,
and tracks a moving goal; through app.run the main job's motion report says smooth where the clipped step did not."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from app.control.controller_base import ACCEL_MAX, JERK_MAX
from app.control.jerk_window import ramp_limit
from app.control.joint_step import JointStep

DT = 1.0 / 120.0


def drive(model, goals, q0=None, jerk_max=JERK_MAX, reset_at=None):
    """Ticks of a JointStep over goals (T, n_envs, n) on a motor that follows qdot exactly -> (q (T+1, ...),
    qdot (T, ...))."""
    step = JointStep(model, ACCEL_MAX, jerk_max=jerk_max)
    q = np.tile(model.q_lower * 0 if q0 is None else q0, (goals.shape[1], 1)).astype(float)
    v = np.zeros_like(q)
    qs, vs = [q.copy()], []
    for k, goal in enumerate(goals):
        if reset_at is not None and k == reset_at[0]:
            step.reset(reset_at[1])
        _, v = step(q, v, goal, DT)
        q = q + v * DT
        qs.append(q.copy())
        vs.append(v.copy())
    return np.array(qs), np.array(vs)


def accel_and_jerk(qdot):
    a = np.diff(qdot, axis=0, prepend=0.0 * qdot[:1]) / DT
    return a, np.diff(a, axis=0) / DT


def test_a_step_goal_is_reached_within_the_acceleration_and_jerk_bounds_without_ringing(widowx):
    n = widowx.n_dofs
    goal = np.zeros((360, 1, n))
    goal[:, 0, 1] = 1.0  # joint_1 one radian away, three seconds
    q, qdot = drive(widowx, goal)
    a, j = accel_and_jerk(qdot[:, 0, 1])
    assert np.max(np.abs(a)) <= ACCEL_MAX * (1 + 1e-9)
    assert np.max(np.abs(j)) <= JERK_MAX * (1 + 1e-9)
    assert abs(q[-1, 0, 1] - 1.0) < 1e-4
    assert np.max(q[:, 0, 1]) < 1.0 + 2e-3  # no overshoot past a millimetre-scale
    assert np.count_nonzero(np.diff(np.sign(np.round(qdot[:, 0, 1], 6))) != 0) <= 2  # one move, no ringing


def test_the_clipped_step_without_a_jerk_bound_knocks_where_the_shaped_one_does_not(widowx):
    goal = np.zeros((120, 1, widowx.n_dofs))
    goal[:, 0, 1] = 1.0
    _, clipped = drive(widowx, goal, jerk_max=None)
    _, shaped = drive(widowx, goal)
    assert np.max(np.abs(accel_and_jerk(clipped[:, 0, 1])[1])) > 2 * JERK_MAX  # the start at the full bound
    assert np.max(np.abs(accel_and_jerk(shaped[:, 0, 1])[1])) <= JERK_MAX * (1 + 1e-9)


def test_a_goal_moving_at_constant_speed_is_tracked_with_its_velocity_fed_forward(widowx):
    t = np.arange(480) * DT
    goal = np.zeros((len(t), 1, widowx.n_dofs))
    goal[:, 0, 0] = 0.5 * np.sin(2.0 * t) + DT  # the goal one tick ahead, as the IK controller aims
    q, _ = drive(widowx, goal)
    err = np.abs(q[1:, 0, 0] - (goal[:, 0, 0]))
    assert np.max(err[240:]) < 2e-3  # after the start: within 2 mrad of a 1 rad/s sine


def test_a_goal_faster_than_the_velocity_limit_is_followed_at_the_limit_without_a_knock(widowx):
    v_max = widowx.v_max[0]
    goal = np.zeros((240, 1, widowx.n_dofs))
    goal[:, 0, 0] = np.minimum(np.arange(1, 241) * DT * 2.0 * v_max, widowx.q_upper[0] - 0.5)
    _, qdot = drive(widowx, goal)
    assert np.max(np.abs(qdot[:, 0, 0])) <= v_max * (1 + 1e-9)
    assert np.max(np.abs(qdot[:, 0, 0])) > 0.95 * v_max
    assert np.max(np.abs(accel_and_jerk(qdot[:, 0, 0])[1])) <= JERK_MAX * (1 + 1e-9)


def test_a_goal_beyond_a_position_limit_stops_inside_the_limit(widowx):
    goal = np.zeros((600, 1, widowx.n_dofs))
    goal[:, 0, 2] = widowx.q_upper[2] + 1.0
    q, _ = drive(widowx, goal)
    assert np.max(q[:, 0, 2]) <= widowx.q_upper[2]
    assert q[-1, 0, 2] > widowx.q_upper[2] - 1e-3


def test_reset_starts_only_the_named_environments_again_from_their_measured_velocity(widowx):
    step = JointStep(widowx, ACCEL_MAX, jerk_max=JERK_MAX)
    q, v = np.zeros((2, widowx.n_dofs)), np.zeros((2, widowx.n_dofs))
    goal = q.copy()
    goal[:, 0] = 1.0
    for _ in range(30):
        _, v = step(q, v, goal, DT)
        q = q + v * DT
    moving = v[:, 0].copy()
    step.reset([1])
    _, after = step(q, np.zeros_like(v), goal, DT)  # both measured at rest (teleported)
    assert abs(after[1, 0]) <= ACCEL_MAX * DT + 1e-12  # env 1 starts again from rest
    assert after[0, 0] != pytest.approx(0.0, abs=1e-3) and moving[0] > 0.5  # env 0 keeps its window (clipped
    # by the measured one: the motor said 0)


def test_the_ramp_limit_brings_the_acceleration_to_zero_within_the_velocity_given():
    jerk, dt = JERK_MAX, DT
    for dv in (1e-4, 0.05, 0.5, 3.0):
        a, v = float(ramp_limit(np.array(dv), jerk, dt)), 0.0
        while a > 0:
            v += a * dt
            a -= jerk * dt
        assert v <= dv * (1 + 1e-9) + 1e-12


def test_jerk_max_is_refused_below_zero_or_without_an_acceleration_bound():
    from app.config.loader import load_run_config
    from app.errors import AppError

    for sets in ({"controller.jerk_max": -5.0}, {"controller.accel_max": None, "controller.jerk_max": 100.0}):
        with pytest.raises(AppError, match="controller.jerk_max.*must be > 0 rad/s.3 with an accel_max"):
            load_run_config("configs/single_ik.yaml", sets)
    assert load_run_config("configs/single_ik.yaml").controller.jerk_max is None  # the clipped step by default
    assert load_run_config("configs/batched_ik.yaml").controller.jerk_max == JERK_MAX  # the main job keeps the limit


def test_the_main_job_is_smooth_on_most_arms_with_the_shaped_step_and_reaches_every_target(tmp_path):
    out = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "app.run", "configs/batched_ik.yaml", "--no-video", "--duration",
                          "1.5", "--out", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    envs = report["environments"]
    smooth = sum(e["motion"]["verdict"] == "smooth" for e in envs)
    assert smooth >= 14 and all(e["reached_final"] for e in envs)
