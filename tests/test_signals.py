"""app.runtime.signals: a signal whose exception Python loses in an at-fork callback (ray.init forks, logging releases its
lock after each fork) is still handled once the guarded step ends, and without the traceback Python prints of a
lost exception."""

import os
import subprocess
import sys

from tests.conftest import ROOT

LOST_IN_A_FORK = """
import os, signal
from app.runtime.signals import signals_never_lost
signal.signal(signal.SIGINT, signal.default_int_handler)
armed = []
os.register_at_fork(after_in_parent=lambda: armed and signal.raise_signal(signal.SIGINT))  # as a Ctrl-C then
try:
    with signals_never_lost():
        armed.append(True)
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        armed.clear()
        print("the step went on to its end")
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after the step")
"""


def test_a_ctrl_c_lost_in_an_at_fork_callback_interrupts_after_the_step_without_a_traceback():
    res = subprocess.run([sys.executable, "-c", LOST_IN_A_FORK], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.stdout.splitlines() == ["the step went on to its end", "interrupted after the step"], res
    assert "Traceback" not in res.stderr and "Exception ignored" not in res.stderr, res.stderr


def test_other_lost_exceptions_are_still_printed():
    code = LOST_IN_A_FORK.replace("signal.raise_signal(signal.SIGINT)", "1 / 0")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "not interrupted" in res.stdout and "ZeroDivisionError" in res.stderr, res


CTRL_C_IN_GENERATED_CODE = """
import sys
from app.runtime.command import run_cli

def body():
    exec("import signal; signal.raise_signal(signal.SIGINT)")  # a Ctrl-C while a namedtuple's methods are made
    return 0

sys.exit(run_cli(body))
"""


def test_a_ctrl_c_inside_code_made_from_a_string_still_exits_130_with_one_line(tmp_path):
    """CPython marks a KeyboardInterrupt escaping exec or eval of a string as unhandled, and then kills a ``python -m``
    process with SIGINT at exit even though run_cli handled it (exit -2, seen in 2 of 10 Ctrl-Cs to app.run in its
    first second, while its modules imported); the command lines' own KeyboardInterrupt subclass is not marked."""
    (tmp_path / "ctrl_c_cli.py").write_text(CTRL_C_IN_GENERATED_CODE)
    res = subprocess.run([sys.executable, "-m", "ctrl_c_cli"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 130, res
    assert res.stderr.strip().splitlines()[-1].startswith("interrupted (SIGINT): stopped"), res.stderr


def _exc_info_raised_in(filename: str, exc: BaseException):
    try:
        exec(compile("raise exc", filename, "exec"), {"exc": exc})
    except BaseException:  # noqa: BLE001 - the test wants what was raised, whatever it is
        t, e, tb = sys.exc_info()
        return t, e, tb.tb_next  # the frame of `filename` only, as a forked process's own traceback starts there


def test_a_render_process_that_cannot_read_its_start_data_after_the_run_ended_prints_no_traceback(capsys):
    """The fork server's child, forked while a Ctrl-C ended the run, found the run's semaphore gone
    (FileNotFoundError in multiprocessing's SemLock._rebuild) and printed a traceback under the run's one line."""
    from app.runtime.render_server import quiet_orphan_start

    quiet_orphan_start(*_exc_info_raised_in("/usr/lib/python3/multiprocessing/synchronize.py",
                                            FileNotFoundError(2, "No such file or directory")))
    quiet_orphan_start(*_exc_info_raised_in("/usr/lib/python3/multiprocessing/connection.py", EOFError()))
    assert capsys.readouterr().err == ""
    quiet_orphan_start(*_exc_info_raised_in("/work/app/episode/frame_render.py", FileNotFoundError(2, "a mesh")))
    quiet_orphan_start(*_exc_info_raised_in("/usr/lib/python3/multiprocessing/spawn.py", ValueError("bad")))
    err = capsys.readouterr().err
    assert "FileNotFoundError: [Errno 2] a mesh" in err and "ValueError: bad" in err
