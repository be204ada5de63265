"""GUI mode under Xvfb (installed by .ci/run): it runs, a screenshot of the X screen shows the parameter panel
and the frames, and a scripted session pauses, steps, switches environment and quits, writing the report."""

import json
import shutil
import subprocess
import sys

import imageio.v2 as imageio
import numpy as np
import pytest

from tests.conftest import ROOT
from tests.gui.display import HAVE_XVFB, xvfb

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE_XVFB or shutil.which("xwd") is None,
                                                   reason="Xvfb or xwd not installed (Debian: xvfb, x11-apps)")]


def _xvfb(code_or_args, timeout=180):
    with xvfb() as env:
        return subprocess.run([sys.executable, *code_or_args], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, env=env)


def _cli_keys(*args) -> subprocess.CompletedProcess:
    """tests/gui/cli_keys.sh ARGS on a display of its own."""
    with xvfb() as env:
        return subprocess.run(["bash", "tests/gui/cli_keys.sh", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=180, env=env)


def test_scripted_session_pauses_steps_switches_environment_quits_and_writes_the_report(tmp_path):
    """One GUI session (each costs ~10-30 s): its keys, a screenshot of the X screen, and the window's view that
    run_gui saves (screenshot=) showing the arms."""
    import json

    shot, view_png = tmp_path / "screen.png", tmp_path / "gui.png"
    res = _xvfb(["-m", "tests.gui.session", str(tmp_path / "out"), str(shot), str(view_png)])
    assert res.returncode == 0, res.stderr[-3000:]
    log = json.loads(res.stdout.strip().splitlines()[-1])
    seen = {e["poll"]: e for e in log["events"]}
    assert seen[10]["paused"] and seen[10]["k"] == seen[9]["k_before"] + 1  # paused; n stepped exactly once
    assert seen[14]["selected"] == 1 and seen[14]["k"] == seen[10]["k"]  # ] selected env 1; still paused
    assert not seen[25]["paused"] and not seen[25]["help"]  # space resumed, h hid the help
    assert log["quit"] and log["outputs"] == ["report.json", "tracking_error.png"]
    assert log["k"] + 1 < log["steps_in_run"]  # quit before the run's duration: the report says so, and how far
    assert log["stopped_early"] and 0 < log["simulated_s"] < log["steps_in_run"] / 240 and "control" in log["timings"]
    image = imageio.imread(shot)
    panel = image[60:400, 780:1000]  # PyBullet's parameter panel: light grey with slider tracks
    assert (np.abs(panel.astype(int) - 240).max(axis=-1) < 20).mean() > 0.5, "no parameter panel on the screen"
    view = image[40:640, 250:770].astype(int)
    red = ((view[..., 0] > 180) & (view[..., 1] < 60) & (view[..., 2] < 60)).sum()
    green = ((view[..., 1] > 150) & (view[..., 0] < 60) & (view[..., 2] < 60)).sum()
    assert red > 30 and green > 30, (red, green)  # the target and end-effector frames
    saved = imageio.imread(view_png)
    assert saved.shape == (480, 640, 3) and (saved.max(axis=-1) < 70).sum() > 500  # the arms' dark links


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool not installed (Debian: xdotool)")
@pytest.mark.parametrize("key, config", [("q", "configs/batched_ik.yaml"), ("Escape", "configs/single_ik.yaml")])
def test_cli_gui_quits_on_a_real_key_press_and_writes_the_report(tmp_path, key, config):
    """Keys sent to PyBullet's window with xdotool: q quits, ESC (PyBullet closes its window) quits too; the q
    session has 16 environments, whose window must come up within the script's hang guards."""
    out = tmp_path / "out"
    res = _cli_keys(str(out), key, config)
    assert res.returncode == 0, res.stdout[-1000:] + res.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "tracking_error.png"]
    assert "reached" in res.stderr and "GUI keys" in res.stderr
    assert len(json.loads((out / "report.json").read_text())["environments"]) == (16 if key == "q" else 1)


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool not installed (Debian: xdotool)")
def test_sigint_ends_the_gui_in_one_line_without_outputs(tmp_path):
    """SIGINT to the GUI process (as a terminal's Ctrl-C sends it) ends it with 130 and one line; the shell runs it
    with job control, since without it a background job starts with SIGINT ignored."""
    out = tmp_path / "out"
    res = _cli_keys(str(out), "SIGINT")
    assert res.returncode == 130, res.stdout[-1000:] + res.stderr[-2000:]
    assert "interrupted (SIGINT): stopped" in res.stderr
    assert not out.exists() or not any(out.iterdir())


def test_pick_place_gui_picks_again_on_e_and_shows_the_phase_and_gripper(tmp_path):
    """Under the window: 'e' at 0.5 s restarts the selected environment's pick (its pre-grasp begins again), the
    other keeps its first; the sliders are the place target's two; the text line names phase and gripper."""
    code = """
import json
from app.config.loader import load_run_config
from app.control.status import latest_status
from app.episode.gui import run_gui
run = load_run_config('configs/pick_place.yaml', n_envs=2, duration=2.0)
seen = {}
def hook(s):
    s.select(1)
    tick = s.on_tick
    def on_tick(k, controller, q):
        if k == 60:
            s.handle_key(ord('e'))
        seen['line'] = s.status_line(controller, latest_status(controller.telemetry, 2))
        return tick(k, controller, q)
    s.on_tick = on_tick
    seen['sliders'] = s._n_sliders
s = run_gui(run, None, max_steps=90, session_hook=hook)
starts = [ep['phase_started_s']['pre_grasp'] for ep in s.result.episodes]
print(json.dumps({'starts': starts, **seen}))
"""
    res = _xvfb(["-c", code])
    assert res.returncode == 0, res.stderr[-3000:]
    log = __import__("json").loads(res.stdout.strip().splitlines()[-1])
    assert log["starts"][0] == 0.0 and abs(log["starts"][1] - 0.5) < 0.02
    assert log["sliders"] == 2
    assert __import__("re").search(r"\| pre_grasp \| gripper 9\d mm( \| MOTION \w+ joint_\d [\d.]+x)?$", log["line"]), \
        log["line"]  # a limit the motion passed in the last second, where one was
    assert log["line"].startswith("env 1")


def test_m_cycles_the_window_through_a_fixed_and_a_wrist_camera_and_back_to_the_free_view(tmp_path):
    """'m' three times: the window's camera (PyBullet's own view matrix) sits at the fixed cam_high, then at a camera
    on the gripper link where the arm holds it, looking along each one's axis; the preview pane gets each camera's
    picture (different pictures, not blank); the third press returns to the free view."""
    res = _xvfb(["-m", "tests.gui.cameras_session", str(tmp_path)])
    assert res.returncode == 0, res.stderr[-3000:]
    steps = json.loads(res.stdout.strip().splitlines()[-1])["steps"]
    assert [s["name"] for s in steps] == ["cam_high", "cam_wrist", None]
    for s in steps[:2]:
        assert np.linalg.norm(np.subtract(s["eye"], s["cam_eye"])) < 1e-3, s
        assert np.dot(s["axis"], s["cam_axis"]) > 0.9999, s
        assert s["preview"] == [240, 320, 3] and s["line"].endswith(f"view {s['name']}")
    high, wrist = (imageio.imread(tmp_path / f"preview_{n}.png").astype(int) for n in ("cam_high", "cam_wrist"))
    assert high.std() > 10 and wrist.std() > 10 and np.abs(high - wrist).mean() > 20
