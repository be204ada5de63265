"""A disk that fills while a command writes (#41): simulated with RLIMIT_FSIZE in a child process (every write past
the limit fails with EFBIG, in our process and in the ffmpeg it starts, as ENOSPC would), the command exits 2
with one line naming the file, no traceback, no crash, and no dataset left half-written."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs Linux's RLIMIT_FSIZE and SIGXFSZ")

LIMIT = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing the process
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
"""
COMMAND = LIMIT + "import importlib\nsys.exit(importlib.import_module(sys.argv[2]).main(sys.argv[3:]))\n"
WRITE_VIDEO = LIMIT + """
import numpy as np
from app.errors import AppError
from app.render.mp4 import write_mp4
frames = np.random.default_rng(0).integers(0, 255, (30, 96, 128, 3), dtype=np.uint8)  # noise: ~1 MB as H.264
try:
    write_mp4(sys.argv[2], iter(frames), fps=30)
except AppError as exc:
    print(exc)
"""


def _run_limited(limit_bytes: int, module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", COMMAND, str(limit_bytes), module, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)


def test_an_act_recording_on_a_full_disk_is_one_line_and_leaves_no_folder(tmp_path):
    """HDF5 wrote its file itself: on a full disk it printed tracebacks from its destructors and the process died
    of SIGSEGV at exit (exit 139)."""
    out = tmp_path / "act"
    done = _run_limited(60_000, "app.record", "configs/pick_place.yaml", "--episodes", "1", "--duration", "1",
                        "--keep-failed", "--format", "act-hdf5", "--camera-size", "160x120", "--out", str(out))
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2, done.stderr[-2000:]
    assert last.startswith("error: cannot write ") and last.endswith(": File too large"), last
    assert "Traceback" not in done.stderr and not out.exists()


def test_a_video_that_does_not_fit_is_one_line_naming_it_and_no_truncated_file_is_renamed_into_place(tmp_path):
    """imageio's writer returned normally when ffmpeg could not write (ffmpeg printing 'Error writing trailer'
    and the like), so a truncated video was renamed into place; now one AppError names the output."""
    out = tmp_path / "video.mp4"
    done = subprocess.run([sys.executable, "-c", WRITE_VIDEO, "50000", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    # a real full disk: "ffmpeg: No space left on device"; under a file size limit ffmpeg gets SIGXFSZ (Python's
    # subprocess restores its default action in children)
    assert done.stdout.strip() == (f"cannot write {out}: ffmpeg was stopped by SIGXFSZ (the file size limit, "
                                   "ulimit -f)"), (done.stdout, done.stderr[-1000:])
    assert "Error" not in done.stderr and list(tmp_path.iterdir()) == []


def test_a_run_that_cannot_write_its_outputs_leaves_no_folder_it_created(tmp_path):
    """app.run whose plot does not fit (a 20 kB file limit): exit 2 naming the file; the --out folder (and the
    parent it made) are removed again, as they were left empty before."""
    out = tmp_path / "new" / "run"
    done = _run_limited(20_000, "app.run", "configs/single_ik.yaml", "--duration", "0.5", "--no-video",
                        "--out", str(out))
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and last.startswith(f"error: cannot write {out}/"), done.stderr[-1500:]
    assert not (tmp_path / "new").exists()
