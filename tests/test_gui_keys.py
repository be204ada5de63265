"""Keys reach the GUI once per press, also a quick tap that PyBullet reports only as released because it came
and went between two reads of the keys (a slow tick: many environments, a loaded machine)."""

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None or shutil.which("xdotool") is None,
                                reason="xvfb-run or xdotool not installed (Debian: xvfb, xdotool)")


def test_a_tap_between_two_reads_counts_once_and_a_held_key_counts_once():
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 640x480x24", sys.executable, "-m", "tests.gui.key_taps"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    counted = json.loads(next(line for line in res.stdout.splitlines() if line.startswith("{")))
    assert counted["taps"] == [ord("a"), ord("q")], counted
    assert counted["held"] == [ord("w"), ord("z")], counted
