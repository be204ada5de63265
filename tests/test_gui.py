"""GUI mode under Xvfb (installed by .ci/run): it runs, and a screenshot shows the arm."""

import shutil
import subprocess
import sys

import imageio.v2 as imageio
import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("xvfb-run") is None,
                                                   reason="xvfb-run not installed (Debian package xvfb)")]


def _xvfb(code_or_args, timeout=180):
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1024x768x24", sys.executable, *code_or_args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_gui_cli_runs_in_real_time_and_exits_0():
    res = _xvfb(["-m", "app.run", "configs/single_ik.yaml", "--gui", "--duration", "0.5"])
    assert res.returncode == 0, res.stderr[-2000:]


def test_gui_screenshot_shows_the_arm(tmp_path):
    png = tmp_path / "gui.png"
    code = ("from app.config.loader import load_run_config; from app.gui import run_gui; "
            f"run_gui(load_run_config('configs/single_ik.yaml', duration=0.5), screenshot=r'{png}')")
    res = _xvfb(["-c", code])
    assert res.returncode == 0, res.stderr[-2000:]
    image = imageio.imread(png)
    dark = (image.max(axis=-1) < 70).sum()  # the arm's dark links
    assert image.shape == (480, 640, 3) and dark > 500
