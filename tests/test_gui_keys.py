"""Keys reach the GUI once per press, also a quick tap that PyBullet reports only as released because it came
and went between two reads of the keys (a slow tick: many environments, a loaded machine)."""

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.gui.display import HAVE_XVFB, xvfb

pytestmark = pytest.mark.skipif(not HAVE_XVFB or shutil.which("xdotool") is None,
                                reason="Xvfb or xdotool not installed (Debian: xvfb, xdotool)")


def test_a_tap_between_two_reads_counts_once_and_a_held_key_counts_once():
    with xvfb("640x480x24") as env:
        res = subprocess.run([sys.executable, "-m", "tests.gui.key_taps"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    counted = json.loads(next(line for line in res.stdout.splitlines() if line.startswith("{")))
    assert counted["taps"] == [ord("a"), ord("q")], counted
    assert counted["held"] == [ord("w"), ord("z")], counted
