"""The motion-quality report of app.trossen_arm (app.quality over each arm's sampled joints, in the report and the
exit line): the example scripts in examples/trossen_motion/ that would jerk a real WidowX AI (a mode switch
mid-motion, a joint goal applied at once, goals streamed as steps) are flagged with the cause, and their
corrections, done as Trossen's documentation and changelog advise, are reported smooth."""

from __future__ import annotations

import runpy
import time

import numpy as np
import pytest

from app.trossen_arm import world
from app.trossen_arm.report import report_dict
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples" / "trossen_motion"



@pytest.fixture
def run_script(monkeypatch, tmp_path):
    """Runs an example on a fresh world at scale 0 (time.sleep as simulated time) that records for a report; returns
    the one arm's report entry (the outputs themselves are never written)."""
    monkeypatch.setenv("APP_TROSSEN_OUTPUTS", str(tmp_path / "out"))
    monkeypatch.setattr(time, "sleep", lambda s: world.advance(max(0.0, s)))
    opened = []

    def run(name: str) -> dict:
        w = world.reset_world(scale=0.0)
        opened.append(w)
        runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
        report = report_dict(w.recorder, w, name)
        w.outputs = None  # nothing written: the report above is what is checked
        return report

    yield run
    for w in opened:
        w.outputs = None
        w.close()


@pytest.mark.parametrize("script, causes, t_cause, within", [
    ("velocity_switch_mid_motion", ("simulated acceleration",), 0.5, 0.05),  # the switch, halfway through the move
    ("cartesian_then_joint_step", ("commanded velocity",), 5.0, 0.05),  # the joint goal applied at once, after 5 s
    # the stream from its first goals on (2 s): its steps grow with the commanded speed, so jerk or acceleration
    ("streamed_goals_as_steps", ("commanded acceleration", "commanded jerk"), 2.0, 0.2),
])
def test_a_script_that_would_jerk_the_arm_is_flagged_with_its_cause(run_script, script, causes, t_cause, within):
    report = run_script(script)
    motion = report["environments"][0]["motion"]
    assert motion["verdict"] == "flagged"
    first = motion["first_event"]
    cause = f"{first['source']} {first['quantity']}"
    assert cause in causes, first["text"]
    assert t_cause <= first["t"] <= t_cause + within, first["text"]
    assert report["summary"]["motion"] == f"motion: 0/1 smooth; flagged first by {cause} 1"


@pytest.mark.parametrize("script", ["velocity_switch_at_rest", "cartesian_then_joint", "streamed_goals_interpolated",
                                    "gripper_effort_after_cartesian"])
def test_the_corrected_script_is_reported_smooth(run_script, script):
    report = run_script(script)
    motion = report["environments"][0]["motion"]
    assert motion["verdict"] == "smooth", motion["first_event"]
    assert report["summary"]["motion"] == "motion: 1/1 smooth"
    assert motion["duration_s"] > 1.0


def test_a_cartesian_path_commands_no_staircase(run_script):
    """A Cartesian move's joints were solved only to the IK's tolerance, so while the tool moved less than that from
    the last sample the command stood still, then jumped: 3,276 rad/s^3 of commanded jerk at the start of a slow
    3 s move (1,914 on this script). Refined on its branch, the commanded jerk is that of the quintic it follows."""
    report = run_script("cartesian_then_joint")
    peaks = report["environments"][0]["motion"]["joints"]
    worst = max(row["commanded"]["jerk_peak"] for row in peaks.values())
    assert worst < 200.0
    assert np.isfinite(worst)
