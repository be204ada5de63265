"""app.trossen_arm's driver on the simulated WidowX AI: goals in their goal time, non-blocking goals overridden,
the joint limits and the error state, Cartesian goals, the interpolation rules, the clock, no network.

Every test runs in a world of its own at APP_TROSSEN_TIME_SCALE=0 semantics (reset_world(scale=0)): simulated
time advances only by blocking goals and app.trossen_arm.world.advance, so nothing depends on the wall clock."""

from __future__ import annotations

import socket

import numpy as np
import pytest

import app.trossen_arm as trossen_arm  # noqa: PLR0402  (as a script for the real driver imports it)
from app.errors import AppError
from app.trossen_arm import world
from app.trossen_arm.clock import SimClock, scale_from_env
from app.trossen_arm.interpolation import Ramp, state_rows
from app.trossen_arm.layout import arm_urdf

HOME = np.array([0.0, np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0, 0.0])


@pytest.fixture
def driver():
    """A driver configured on a fresh world's 192.168.1.2 arm (simulated), all joints in position mode."""
    world.reset_world(scale=0.0)
    d = trossen_arm.TrossenArmDriver()
    d.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "192.168.1.2", False)
    d.set_all_modes(trossen_arm.Mode.position)
    yield d
    d.cleanup()
    world.world().close()


def test_a_blocking_two_second_goal_is_reached_within_tolerance_in_two_seconds_of_simulated_time(driver):
    """set_all_positions(goal, 2.0, blocking=True) returns after 2.0 s of simulated time with every joint within
    1 mrad (1 um for the gripper) of the goal: far inside the driver's position tolerances (0.2 / 0.4 rad)."""
    goal = HOME.copy()
    goal[6] = 0.02
    t0 = world.simulated_time()
    driver.set_all_positions(goal, 2.0, True)
    assert world.simulated_time() - t0 == pytest.approx(2.0, abs=1e-3)
    err = np.abs(np.array(driver.get_all_positions()) - goal)
    assert err[:6].max() < 1e-3 and err[6] < 1e-3
    assert max(err[:6]) < min(lim.position_tolerance for lim in driver.get_joint_limits())


def test_a_non_blocking_goal_goes_on_meanwhile_and_a_new_goal_overrides_it_midway(driver):
    """A non-blocking 2 s goal is part-way after 1 s; a new goal then takes over from where the command is and
    the arm ends at the new goal, never at the first."""
    driver.set_all_positions(HOME, 2.0, False)
    world.advance(1.0)
    mid = np.array(driver.get_all_positions())
    assert 0.3 * HOME[1] < mid[1] < 0.7 * HOME[1]  # the quintic is at half its way after half its time
    other = np.zeros(7)
    other[0] = 0.5
    driver.set_all_positions(other, 1.0, True)
    q = np.array(driver.get_all_positions())
    assert np.abs(q - other).max() < 1e-3
    assert q[1] < 0.05  # the first goal was given up


def test_a_goal_outside_the_joint_limits_is_clipped_to_them_as_the_real_controller_clips(driver):
    """Joint 2 asked for 3.0 rad (its limit 2.356): the controller clips the command, the joint stops at its
    limit and no error is raised (the real controller checks the measured joints, not the command)."""
    goal = HOME.copy()
    goal[2] = 3.0
    driver.set_all_positions(goal, 2.0, True)
    limit = driver.get_joint_limits()[2].position_max
    assert driver.get_all_positions()[2] == pytest.approx(limit, abs=2e-3)
    assert "No error" in driver.get_error_information()


def test_a_gripper_goal_beyond_its_travel_stops_at_the_limit_without_tripping_the_limit_error(driver):
    """The gripper asked for 0.06 m (its travel ends at 0.04 m) in 1 s: the command is clipped and the ramp's
    feed-forward velocity no longer carries the carriage past the limit into "Joint limit exceeded" (it went to
    0.044 m)."""
    driver.set_gripper_position(0.06, 1.0, True)
    world.advance(0.5)
    limit = driver.get_joint_limits()[6].position_max
    assert driver.get_gripper_position() == pytest.approx(limit, abs=1e-4)
    assert driver.get_gripper_position() <= limit + 1e-5
    assert "No error" in driver.get_error_information()


def test_a_joint_beyond_its_limit_puts_the_arm_in_error_and_the_driver_raises_the_real_error(driver):
    """A step the wrist cannot follow (pi in 0 s, as Trossen's error_recovery demo) drives it past its velocity
    limit: the arm's error state is joint_limit_exceeded, every command raises RuntimeError ('Joint limit
    exceeded', then the controller's log, then Trossen's troubleshooting line) until configure(clear_error=True)."""
    driver.set_all_positions(HOME)
    step = HOME.copy()
    step[5] += np.pi
    with pytest.raises(trossen_arm.RuntimeError, match=r"^Joint limit exceeded; .*joint 5 velocity") as info:
        driver.set_all_positions(step, 0.0)
        driver.set_all_positions(HOME, 1.0)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, AppError)
    assert "troubleshooting" in str(info.value)
    with pytest.raises(trossen_arm.RuntimeError):
        driver.set_all_modes(trossen_arm.Mode.position)
    driver.cleanup()
    driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "192.168.1.2", True)
    driver.set_all_modes(trossen_arm.Mode.position)
    driver.set_all_positions(np.zeros(7))
    assert np.abs(np.array(driver.get_all_positions())).max() < 1e-3


def test_an_unreachable_cartesian_goal_raises_the_real_drivers_ik_error_and_nothing_moves(driver):
    """A pose 2 m away: RuntimeError 'Algorithm interface cannot find an inverse kinematics solution for the
    Cartesian positions: [2.5, 0, 0.4275, 0, 0, 0]' (the real message, numbers as its fmt prints them) in joint
    space; in Cartesian space the same words name the first pose of the line without a solution; the arm stays."""
    driver.set_all_positions(HOME)
    before = np.array(driver.get_all_positions())
    goal = [2.5, 0.0, 0.4275, 0.0, 0.0, 0.0]
    words = r"^Algorithm interface cannot find an inverse kinematics solution for the Cartesian positions: \["
    with pytest.raises(trossen_arm.RuntimeError, match=words + r"2\.5, 0, 0\.4275, 0, 0, 0\]\n"):
        driver.set_cartesian_positions(goal, trossen_arm.InterpolationSpace.joint)
    with pytest.raises(trossen_arm.RuntimeError, match=words):
        driver.set_cartesian_positions(goal, trossen_arm.InterpolationSpace.cartesian)
    assert np.abs(np.array(driver.get_all_positions()) - before).max() < 1e-4


def test_a_cartesian_goal_in_cartesian_space_moves_the_tool_on_a_straight_line(driver):
    """Up 0.1 m in Cartesian space: half-way in time the tool is on the segment (within 1 mm), at the end at the
    goal (within 1 mm); in joint space the same goal is reached too."""
    driver.set_all_positions(HOME)
    start = np.array(driver.get_cartesian_positions())
    goal = start.copy()
    goal[2] += 0.1
    goal[0] -= 0.1
    driver.set_cartesian_positions(goal, trossen_arm.InterpolationSpace.cartesian, 2.0, False)
    world.advance(1.0)
    mid = np.array(driver.get_cartesian_positions())[:3]
    d = goal[:3] - start[:3]
    off_line = np.linalg.norm(np.cross(mid - start[:3], d)) / np.linalg.norm(d)
    assert off_line < 1e-3
    world.advance(1.0)
    assert np.abs(np.array(driver.get_cartesian_positions())[:3] - goal[:3]).max() < 1e-3
    driver.set_cartesian_positions(start, trossen_arm.InterpolationSpace.joint)
    assert np.abs(np.array(driver.get_cartesian_positions()) - start).max() < 1e-3


def test_a_cartesian_twist_in_velocity_mode_moves_the_tool_at_that_speed(driver):
    """Velocity mode, 0.05 m/s up for 1 s (Cartesian space), then zero: the tool rose 0.05 m (within 3 mm) and
    moved less than 3 mm sideways."""
    driver.set_all_positions(HOME)
    start = np.array(driver.get_cartesian_positions())
    driver.set_arm_modes(trossen_arm.Mode.velocity)
    driver.set_cartesian_velocities([0, 0, 0.05, 0, 0, 0], trossen_arm.InterpolationSpace.cartesian, 0.0, False)
    world.advance(1.0)
    driver.set_cartesian_velocities([0.0] * 6, trossen_arm.InterpolationSpace.cartesian, 0.0, True)
    moved = np.array(driver.get_cartesian_positions())[:3] - start[:3]
    assert moved[2] == pytest.approx(0.05, abs=3e-3) and np.abs(moved[:2]).max() < 3e-3


def test_the_gripper_opens_and_closes_with_external_efforts_and_goes_to_a_position(driver):
    """+20 N opens the gripper to its limit (0.04 m), -20 N closes it (0 m), position mode puts it at 0.02 m."""
    driver.set_gripper_mode(trossen_arm.Mode.external_effort)
    driver.set_gripper_external_effort(20.0, 1.0, True)
    world.advance(0.5)
    assert driver.get_gripper_position() == pytest.approx(0.04, abs=1e-3)
    driver.set_gripper_external_effort(-20.0, 1.0, True)
    world.advance(0.5)
    assert driver.get_gripper_position() == pytest.approx(0.0, abs=1e-3)
    driver.set_gripper_mode(trossen_arm.Mode.position)
    driver.set_gripper_position(0.02, 1.0, True)
    assert driver.get_gripper_position() == pytest.approx(0.02, abs=1e-4)


def test_a_command_for_joints_in_another_mode_is_refused_as_the_real_driver_refuses_it(driver):
    """Arm joints in velocity mode refuse a position goal (LogicError naming the joint and its mode)."""
    driver.set_arm_modes(trossen_arm.Mode.velocity)
    with pytest.raises(trossen_arm.LogicError, match="Requested to set joint 0 position but it is in mode velocity"):
        driver.set_arm_positions(np.zeros(6))


def test_wrong_sizes_and_negative_goal_times_raise_the_real_messages(driver):
    """Six values for seven joints, or a negative goal time: LogicErrors with the real driver's wording."""
    with pytest.raises(trossen_arm.LogicError, match="Invalid goal positions size: expected 7, got 6"):
        driver.set_all_positions(np.zeros(6))
    with pytest.raises(trossen_arm.LogicError, match="Invalid goal time: expected non-negative"):
        driver.set_all_positions(np.zeros(7), -1.0)


@pytest.mark.parametrize("goal_time", [float("inf"), float("nan"), 1e9])
@pytest.mark.parametrize("blocking", [True, False])
def test_an_endless_goal_time_is_refused_before_any_motion(driver, goal_time, blocking):
    """inf with blocking never returned; without it every joint read NaN. Refused, the arm where it was."""
    before = driver.get_all_positions()
    with pytest.raises(trossen_arm.LogicError, match="Invalid goal time: expected non-negative and finite"):
        driver.set_all_positions(np.zeros(7), goal_time, blocking)
    assert np.isfinite(driver.get_all_positions()).all() and list(driver.get_all_positions()) == list(before)


@pytest.mark.parametrize("field, value, words", [
    ("position_max", float("nan"), "position_max must be a finite number, got nan"),
    ("velocity_max", float("inf"), "velocity_max must be a finite number, got inf"),
    ("effort_max", -1.0, "effort_max must not be negative"),
    ("position_min", 5.0, r"position_min \(5.0\) must be below position_max")])
def test_joint_limits_that_are_not_finite_or_out_of_order_are_refused_and_the_old_ones_kept(driver, field, value,
                                                                                            words):
    """A NaN position limit was taken and left every joint reading NaN after the next goal."""
    before = driver.get_joint_limits()
    limits = driver.get_joint_limits()
    setattr(limits[2], field, value)
    with pytest.raises(trossen_arm.LogicError, match="Invalid joint limit of joint 2: " + words):
        driver.set_joint_limits(limits)
    assert [(x.position_min, x.position_max, x.velocity_max) for x in driver.get_joint_limits()] == \
        [(x.position_min, x.position_max, x.velocity_max) for x in before]
    driver.set_all_positions(HOME, 2.0, True)
    assert np.isfinite(driver.get_all_positions()).all()


def test_configure_opens_no_network_connection(monkeypatch):
    """configure and a move work with every socket refused: the IP only names a simulated arm."""
    def refuse(*args, **kwargs):
        raise AssertionError("a socket was opened")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    world.reset_world(scale=0.0)
    d = trossen_arm.TrossenArmDriver()
    d.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_base, "192.168.1.77", False)
    d.set_all_modes(trossen_arm.Mode.position)
    d.set_joint_position(1, 0.5, 0.5, True)
    assert d.get_joint_position(1) == pytest.approx(0.5, abs=1e-3)
    d.cleanup()


@pytest.mark.parametrize("goal_time, kind", [(2.0, "quintic"), (0.2, "linear"), (0.01, "linear"), (0.001, "step"),
                                             (0.0, "step")])
def test_the_goal_time_picks_the_real_interpolation_rule(goal_time, kind):
    """Above 0.2 s quintic, above 1 ms linear, else a step; a quintic starts and ends at rest."""
    ramp = Ramp(0.0, goal_time, state_rows(np.zeros(1)), state_rows(np.ones(1)), order=2)
    assert ramp.kind() == kind
    assert ramp.sample(goal_time)[0, 0] == 1.0
    if kind == "quintic":
        assert ramp.sample(1.0)[0, 0] == pytest.approx(0.5) and ramp.sample(0.0)[1, 0] == 0.0
        assert ramp.sample(goal_time - 1e-9)[1, 0] == pytest.approx(0.0, abs=1e-6)
    if kind == "linear":
        assert ramp.sample(goal_time / 4)[0, 0] == pytest.approx(0.25)


def test_simulated_time_follows_the_wall_clock_at_the_scale_asked():
    """Scale 2: 1.5 s of wall clock are 3 s of simulated time; a blocking goal of 1 s waits 0.5 s; scale 0 never
    follows the wall clock; a bad APP_TROSSEN_TIME_SCALE is refused."""
    wall, waits = [100.0], []
    clock = SimClock(2.0, wall=lambda: wall[0], sleep=waits.append)
    wall[0] += 1.5
    assert clock.target() == pytest.approx(3.0)
    clock.wait_until(4.0)
    assert waits == [pytest.approx(0.5)]
    frozen = SimClock(0.0, wall=lambda: wall[0], sleep=waits.append)
    wall[0] += 10.0
    assert frozen.target() == 0.0
    with pytest.raises(AppError, match="APP_TROSSEN_TIME_SCALE"):
        scale_from_env({"APP_TROSSEN_TIME_SCALE": "fast"})
    with pytest.raises(AppError, match="from 0 to 100"):  # 1e12: the simulation never caught up
        scale_from_env({"APP_TROSSEN_TIME_SCALE": "1e12"})


def test_configurations_saved_to_a_yaml_file_load_back(driver, tmp_path):
    """Joint limits, the IP method and the tool frame written by save_configs_to_file come back through
    load_configs_from_file on another arm's driver."""
    limits = driver.get_joint_limits()
    limits[0].position_max, limits[0].velocity_tolerance = 1.0, 0.5
    driver.set_joint_limits(limits)
    driver.set_ip_method(trossen_arm.IPMethod.dhcp)
    ee = driver.get_end_effector()
    ee.t_flange_tool[0] = 0.1
    driver.set_end_effector(ee)
    driver.save_configs_to_file(str(tmp_path / "arm.yaml"))
    other = trossen_arm.TrossenArmDriver()
    other.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_base, "192.168.1.3", False)
    other.load_configs_from_file(str(tmp_path / "arm.yaml"))
    got = other.get_joint_limits()[0]
    assert (got.position_max, got.velocity_tolerance) == (1.0, 0.5)
    assert other.get_ip_method() == trossen_arm.IPMethod.dhcp
    assert other.get_end_effector().t_flange_tool[0] == 0.1
    other.cleanup()


def test_discover_lists_the_stationary_ai_arms_without_a_network(driver):
    """discover on a subnet answers the kit's four simulated controllers (.2-.5) within the range asked."""
    found = trossen_arm.TrossenArmDriver.discover("192.168.1", 3, 254)
    assert [r.ip for r in found] == ["192.168.1.3", "192.168.1.4", "192.168.1.5"]
    assert all(r.error_state == trossen_arm.ErrorState.none for r in found)


def test_app_trossen_scene_names_the_scene_whose_robots_the_ips_address(monkeypatch, tmp_path):
    """APP_TROSSEN_SCENE=FILE: the scene's robots are the arms .2, .3 (in order, at their base poses) and its
    table and obstacles the world's boxes."""
    scene = tmp_path / "pair.yaml"
    urdf = arm_urdf()
    scene.write_text(f"""
robots:
  - {{name: left, urdf: {urdf}, base_pos: [0.0, 0.5, 0.0]}}
  - {{name: right, urdf: {urdf}, base_pos: [0.0, -0.5, 0.0], base_quat: [0.7071068, 0.0, 0.0, 0.7071068]}}
table: {{name: table, size: [1.0, 1.4, 0.04], pos: [0.2, 0.0, -0.0205]}}
obstacles:
  - {{name: block, size: [0.05, 0.05, 0.1], pos: [0.4, 0.0, 0.05]}}
""")
    monkeypatch.setenv("APP_TROSSEN_SCENE", str(scene))
    w = world.reset_world(scale=0.0)
    d = trossen_arm.TrossenArmDriver()
    d.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_follower, "192.168.1.3", False)
    assert list(w.arms) == ["right"] and w.arms["right"].place.base_pos == (0.0, -0.5, 0.0)
    assert set(w.scene.box_ids) == {"table", "block"}
    d.set_all_modes(trossen_arm.Mode.position)
    d.set_joint_position(0, 0.4, 0.5)
    assert d.get_joint_position(0) == pytest.approx(0.4, abs=1e-3)
    d.cleanup()
    w.close()
