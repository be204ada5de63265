"""The simulated arms keep their promises: joints within their limits (1e-6 rad), velocities within their URDF
bounds (+2 %) in motor-driven modes, the QP controller at least d_safe - 0.1 mm from obstacles; the report
states each invariant's worst value. The 20 s runs (each target circles several times) are slow-marked and run in
CI; a longer soak is the same command with --duration 60 (the report's invariants)."""

import json

import pytest

from app.run import main
from tests.conftest import ROOT


def _report(tmp_path, config, seconds):
    out = tmp_path / config
    assert main([str(ROOT / "configs" / f"{config}.yaml"), "--duration", str(seconds), "--no-video",
                 "--out", str(out)]) == 0
    return json.loads((out / "report.json").read_text())


def test_the_report_states_every_invariant_and_its_promise(tmp_path):
    inv = _report(tmp_path, "single_ik", 0.5)["invariants"]
    assert set(inv) == {"joint_limit_excess_max_rad", "joint_limit_promise_rad", "velocity_over_bound_max",
                        "velocity_promise", "min_obstacle_distance_m", "obstacle_promise_m"}
    assert inv["joint_limit_excess_max_rad"] <= 1e-6 and inv["velocity_over_bound_max"] <= 1.02


@pytest.mark.slow
@pytest.mark.parametrize("config", ["batched_ik", "qp_obstacle"])
def test_twenty_seconds_of_simulation_keep_limits_velocities_and_margins(tmp_path, config):
    report = _report(tmp_path, config, 20.0)
    inv = report["invariants"]
    assert inv["joint_limit_excess_max_rad"] <= 1e-6, inv
    assert inv["velocity_over_bound_max"] <= 1.02, inv
    if inv["obstacle_promise_m"] is not None:
        assert inv["min_obstacle_distance_m"] >= inv["obstacle_promise_m"], inv
    for env in report["environments"]:
        assert env["joint_limit_excess_max_rad"] <= 1e-6 and env["velocity_over_bound_max"] <= 1.02
