"""The simulated arms keep their promises: joints within their limits (1e-6 rad), velocities within their URDF
bounds (+2 %) in motor-driven modes, the QP controller at least d_safe - 0.1 mm from obstacles; the report
states each invariant's worst value. The long soak runs are slow-marked (and run in CI)."""

import json

import pytest

from app.run import main
from tests.conftest import ROOT


def _report(tmp_path, config, seconds, *more):
    out = tmp_path / config
    assert main([str(ROOT / "configs" / f"{config}.yaml"), "--duration", str(seconds), "--no-video",
                 "--out", str(out), *more]) == 0
    return json.loads((out / "report.json").read_text())


def test_the_report_states_every_invariant_and_its_promise(tmp_path):
    inv = _report(tmp_path, "single_ik", 0.5)["invariants"]
    assert set(inv) == {"joint_limit_excess_max_rad", "joint_limit_promise_rad", "velocity_over_bound_max",
                        "velocity_promise", "min_obstacle_distance_m", "obstacle_promise_m", "joint_stop_hits"}
    assert inv["joint_limit_excess_max_rad"] <= 1e-6 and inv["velocity_over_bound_max"] <= 1.02
    assert inv["joint_stop_hits"] == 0  # the controller keeps the arm off its hard stops


@pytest.mark.slow
@pytest.mark.parametrize("config, seconds, more", [
    ("batched_ik", 60.0, ["--n-envs", "4"]),  # a minute of circles at four drawn speeds
    ("qp_obstacle", 20.0, []),  # over three laps of its 6 s looping path through the table and the block
])
def test_a_long_simulation_keeps_limits_velocities_and_margins(tmp_path, config, seconds, more):
    report = _report(tmp_path, config, seconds, *more)
    inv = report["invariants"]
    assert inv["joint_limit_excess_max_rad"] <= 1e-6, inv
    assert inv["velocity_over_bound_max"] <= 1.02, inv
    if inv["obstacle_promise_m"] is not None:
        assert inv["min_obstacle_distance_m"] >= inv["obstacle_promise_m"], inv
    for env in report["environments"]:
        assert env["joint_limit_excess_max_rad"] <= 1e-6 and env["velocity_over_bound_max"] <= 1.02


@pytest.mark.parametrize("seed", [1, 7])
def test_an_opened_gripper_keeps_both_fingers_inside_their_limits_after_a_one_sided_grasp(tmp_path, seed):
    """Seeds whose grasps leave the two geared fingers offset: on opening, each finger's motor drove towards
    its own goal, the two cancelled through the gear, and one finger stood 1e-5..3e-5 m past its open limit."""
    out = tmp_path / "pick"
    assert main([str(ROOT / "configs" / "pick_place.yaml"), "--seed", str(seed), "--no-video", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["invariants"]["joint_limit_excess_max_rad"] <= 1e-6, report["invariants"]
    assert report["summary"]["placed"] == len(report["environments"])  # the grasps still hold
