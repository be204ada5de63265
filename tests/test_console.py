"""What the console shows: no PyBullet build-time banner (from this process or the render processes), a user error
as the one and only stderr line, argparse's error as the last line (Ray's token notice: tests/test_scale.py's signal
runs and tests/test_ray_session.py, which start Ray locally)."""

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _run(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "app.run", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_a_run_with_video_prints_no_pybullet_banner(tmp_path):
    res = _run("configs/single_ik.yaml", "--duration", "0.2", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr[-2000:]
    assert "pybullet build time" not in res.stderr + res.stdout
    assert (tmp_path / "video.mp4").is_file()


def test_a_user_error_is_the_only_stderr_line(tmp_path):
    res = _run(str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "out"))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing.yaml" in lines[0] and lines[0].startswith("error: "), res.stderr


def test_an_unknown_option_ends_with_argparse_error_line():
    res = _run("configs/single_ik.yaml", "--bogus")
    assert res.returncode == 2
    assert "unrecognized arguments: --bogus" in res.stderr.strip().splitlines()[-1]


def test_a_full_file_system_while_writing_an_output_is_one_app_error_and_leaves_nothing(tmp_path):
    import errno

    import pytest

    from app.errors import AppError
    from app.runtime.outputs import write_atomic

    def full(tmp):
        with open(tmp, "wb") as f:
            f.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(AppError, match=r"cannot write .*report.json: No space left on device"):
        write_atomic(tmp_path / "report.json", ".json", full)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(AppError, match="cannot write"):  # a read-only place: the folder cannot even be made
        write_atomic(Path("/proc/no/such/report.json"), ".json", lambda tmp: None)


def test_the_first_import_with_a_cold_kernel_cache_says_it_will_compile(tmp_path):
    """Through the API too (not only the CLI): a new cache folder means the first calls compile, and it says so."""
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop("APP_COMPILE_NOTICE", None)
    res = subprocess.run([sys.executable, "-c", "import app"], cwd=ROOT, capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 0 and "compiling the numba kernels" in res.stderr, res.stderr
    warm = subprocess.run([sys.executable, "-c", "import app"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "compiling" not in warm.stderr  # this checkout's cache is warm from the suite's own runs


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_while_the_package_still_imports_ends_in_one_line_without_traceback(tmp_path, sig, code, word):
    """Ctrl-C in a command's first second lands while ``app`` imports numba and the IK (before ``run_cli``): the
    signal is sent when ``python -v`` reports that ``app.ik.robot_model`` is being imported."""
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-v", "-m", "app.run", "configs/single_ik.yaml", "--no-video",
                             "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "app/ik/robot_model.py" in line:
            proc.send_signal(sig)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == code, rest[-2000:]
    # -v's own lines aside; -v writes a line and its end in two writes, so ours may follow "# code object from ..."
    ours = re.findall(r"(?:interrupted|terminated) \(SIG[A-Z]+\).*", rest)
    others = [line for line in rest.splitlines() if not line.startswith(("#", "import ")) and not line.endswith(
        tuple(ours))]
    assert len(ours) == 1 and ours[0].startswith(word) and not others and "Traceback" not in rest, (ours, others)
    assert not out.exists()


def test_an_app_error_of_several_lines_ends_the_command_on_one_stderr_line(capsys):
    """A message quoting a library's lines (Ruckig's input report, a YAML problem mark) put part of the error
    before the last line."""
    import argparse

    from app.errors import InputError
    from app.runtime.command import command_main

    def body(_args) -> int:
        raise InputError("ruckig could not time the edge:\n[ruckig] error in step 1\n\ninp.max_jerk = [inf]")

    assert command_main(lambda argv: argparse.Namespace(), body, []) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: ruckig could not time the edge:; [ruckig] error in step 1; inp.max_jerk = [inf]"]
