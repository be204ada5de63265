"""Seeing what a script did to the simulated arms: APP_TROSSEN_OUTPUTS leaves app.run's video (the overlay's
caption, each arm's pose goal drawn as a frame) and app.run's report layout with the limit and collision events;
APP_TROSSEN_GUI shows the arms, their goals and their status lights in PyBullet's window (under Xvfb)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import imageio.v2 as imageio
import numpy as np
import pytest

from app import trossen_arm
from app.errors import AppError
from app.render.overlay import AXIS_RGB
from app.trossen_arm import world
from app.trossen_arm.recorder import STATUS_STYLE, ArmStatus
from tests.conftest import ROOT
from tests.gui.display import HAVE_XVFB, xvfb
from tests.gui.xwd import read_xwd

HEADER = textwrap.dedent("""
    import numpy as np
    import app.trossen_arm as trossen_arm

    driver = trossen_arm.TrossenArmDriver()
    driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
    driver.set_all_modes(trossen_arm.Mode.position)
""")


def _colour_pixels(image: np.ndarray, rgb, tol: int = 40) -> int:
    return int((np.abs(image.astype(int) - np.array(rgb)).max(axis=-1) < tol).sum())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A world at scale 0 recording into tmp_path/out: wrist goals past its limit (clipped), then the shoulder
    pitched down until the fingers touch the table; outputs written, the world closed after (once per module)."""
    out = tmp_path_factory.mktemp("recorded") / "out"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("APP_TROSSEN_OUTPUTS", str(out))
        env.delenv("APP_TROSSEN_GUI", raising=False)
        w = world.reset_world(scale=0.0)
    driver = trossen_arm.TrossenArmDriver()
    driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
    driver.set_all_modes(trossen_arm.Mode.position)
    driver.set_joint_position(4, 1.65, 1.0)  # the wrist's limit is pi/2: the controller clips the goal
    for _ in range(3):  # the same clip again: still the one event
        driver.set_joint_position(4, 1.65, 0.05)
    driver.set_arm_positions([0.0, 1.5, 0.0, 0.0, 0.0, 0.0], 2.0)  # into the table, slowly: a fast reach knocks
    # the fingers past their speed limit (Joint limit exceeded)
    w.write_outputs()
    yield out, w
    w.close()


def test_the_report_has_app_runs_layout_and_the_limit_and_collision_events(recorded):
    """report.json: app.run's keys (summary, environments with q_final, pos_err_final_m, reached_final), the clipped
    goals (one event, as clipping began) and the fingers' contacts with the table as events in time order; the arm
    pushed off its goal missed it."""
    out, w = recorded
    report = json.loads((out / "report.json").read_text())
    assert {"config", "controller", "summary", "reached_tolerance", "invariants", "events", "environments"} <= set(report)
    (arm,) = report["environments"]
    assert arm["arm"] == "leader_right" and len(arm["q_final"]) == 7 and arm["error_state_final"] == "none"
    kinds = [(e["kind"], e.get("joints"), e.get("with")) for e in report["events"]]
    assert kinds[0] == ("goal_clipped", [4], None)
    assert ("collision", None, "table") in kinds[1:]
    assert [e["t"] for e in report["events"]] == sorted(e["t"] for e in report["events"])
    assert report["summary"]["limit_events"] == 1 and report["summary"]["collisions"] >= 1
    assert not arm["reached_final"] and arm["pos_err_final_m"] > 0.01 and report["summary"]["missed_envs"] == [0]
    assert report["video"]["recorded_frames"] == pytest.approx(30 * w.t, abs=2)
    assert report["video"]["frames"] <= report["video"]["recorded_frames"]


def test_the_video_leaves_out_a_scripts_idle_opening_but_half_a_second():
    """Trossen-style scripts spend their first seconds configuring: the video began with ~2 s of a still arm.
    It now starts LEAD_S before the first frame where an arm moves or has a goal; still scripts keep every frame."""
    from app.episode.frame_state import FrameState
    from app.trossen_arm.video import LEAD_S, without_idle_start

    def state(t, q, goal=False):
        pos = np.full((1, 1, 3), 0.3 if goal else np.nan)
        return FrameState(t, np.array([[q, 0.0]]), pos, np.tile([1.0, 0, 0, 0], (1, 1, 1)), np.zeros(1, np.int8))

    still = [state(k / 30, 0.0) for k in range(60)]
    moving = still + [state(2 + k / 30, 0.01 * k) for k in range(1, 30)]
    kept = without_idle_start(moving)
    assert len(kept) == int(LEAD_S * 30) + 29 and kept[0].t == pytest.approx(2 - LEAD_S)
    assert without_idle_start(still) == still
    goal_first = still[:30] + [state(1.0, 0.0, goal=True)] + still[31:]
    assert without_idle_start(goal_first)[0].t == pytest.approx(1.0 - LEAD_S)


def test_the_video_shows_the_arm_its_goal_frame_the_caption_and_its_status(recorded):
    """video.mp4, one frame per recorded frame: in the last, the caption's black box top left, the goal frame's red,
    green and blue axes, the dark arm, and the status dot in the contact colour."""
    out, _ = recorded
    reader = imageio.get_reader(out / "video.mp4")
    frames = [f for f in reader]
    reader.close()
    assert len(frames) == json.loads((out / "report.json").read_text())["video"]["frames"]
    last = frames[-1]
    assert (last[8:20, 8:120].max(axis=-1) < 40).mean() > 0.5, "no caption box"
    for rgb in AXIS_RGB:
        assert _colour_pixels(last, rgb) > 20, rgb
    assert (last.max(axis=-1) < 60).sum() > 2000, "no dark arm links"
    assert _colour_pixels(last, STATUS_STYLE[ArmStatus.CONTACT][1], 30) > 10


def test_a_script_run_with_app_trossen_outputs_writes_both_at_its_exit(tmp_path):
    """No change to the script: APP_TROSSEN_OUTPUTS=FOLDER leaves FOLDER/video.mp4 and FOLDER/report.json when it
    exits, the report naming the script and the arm at its goal."""
    script = tmp_path / "home_and_back.py"
    script.write_text(HEADER + "driver.set_all_positions([0, 0.6, 0.6, 0, 0, 0, 0.02], 0.5)\n")
    env = {"APP_TROSSEN_OUTPUTS": str(tmp_path / "out"), "APP_TROSSEN_TIME_SCALE": "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env={**_env(), **env}, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["config"] == "home_and_back" and report["summary"]["reached"] == 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.json", "video.mp4"]


def test_an_unwritable_output_folder_is_refused_before_any_arm_moves(monkeypatch, tmp_path):
    """APP_TROSSEN_OUTPUTS naming a file: the world is refused at once with app.run's message."""
    (tmp_path / "taken").write_text("")
    monkeypatch.setenv("APP_TROSSEN_OUTPUTS", str(tmp_path / "taken"))
    with pytest.raises(AppError, match="exists and is not a folder"):
        world.reset_world(scale=0.0)
    monkeypatch.delenv("APP_TROSSEN_OUTPUTS")
    world.reset_world(scale=0.0).close()


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("APP_TROSSEN")}


GUI_SCRIPT = HEADER + textwrap.dedent("""
    import subprocess
    import sys
    from pathlib import Path
    from app.trossen_arm import world

    driver.set_all_positions([0, 1.0, 1.0, 0, 0, 0, 0.03], 0.5)
    pose = np.array(driver.get_cartesian_positions())
    pose[2] -= 0.05
    driver.set_cartesian_positions(pose, trossen_arm.InterpolationSpace.cartesian, 0.25)
    world.advance(0.05)
    Path(sys.argv[1]).write_bytes(subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True).stdout)
""")  # the X screen: PyBullet's getDebugVisualizerCamera answers zeros when the window is not the first client


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_XVFB or shutil.which("xwd") is None,
                    reason="Xvfb or xwd not installed (Debian: xvfb, x11-apps)")
def test_app_trossen_gui_shows_the_arm_its_goal_frame_and_its_status_light(tmp_path):
    """APP_TROSSEN_GUI=1 under Xvfb, the script unchanged but for its screenshot (xwd): the window's 3-D view shows
    the dark arm, the goal frame's red, green and blue axes, and the light in the goal-reached green."""
    script, shot = tmp_path / "gui.py", tmp_path / "screen.xwd"
    script.write_text(GUI_SCRIPT)
    with xvfb() as env:
        env = {**{k: v for k, v in env.items() if not k.startswith("APP_TROSSEN")}, "APP_TROSSEN_GUI": "1",
               "APP_TROSSEN_TIME_SCALE": "0", "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, str(script), str(shot)], env=env, capture_output=True, text=True,
                              timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    image = read_xwd(shot.read_bytes())[40:640, 250:770]  # the 3-D view, between the explorer and the panel
    assert (image.max(axis=-1) < 50).sum() > 300, "no dark arm links"
    for rgb in ((200, 0, 0), (0, 200, 0), (0, 0, 200)):  # PyBullet's shaded axis colours
        assert _colour_pixels(image, rgb, 70) > 15, rgb
    assert _colour_pixels(image, STATUS_STYLE[ArmStatus.REACHED][1], 50) > 10


def test_app_trossen_gui_without_a_display_is_refused_with_the_variable_named(monkeypatch):
    """APP_TROSSEN_GUI=1 and no DISPLAY: an error naming the variable, not PyBullet killing the process."""
    monkeypatch.setenv("APP_TROSSEN_GUI", "1")
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(AppError, match="APP_TROSSEN_GUI=1 .* needs a display"):
        world.reset_world(scale=0.0)
    monkeypatch.delenv("APP_TROSSEN_GUI")
    world.reset_world(scale=0.0).close()
