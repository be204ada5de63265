"""app.signals: a signal whose exception Python loses in an at-fork callback (ray.init forks, logging releases its
lock after each fork) is still handled once the guarded step ends, and without the traceback Python prints of a
lost exception."""

import subprocess
import sys

from tests.conftest import ROOT

LOST_IN_A_FORK = """
import os, signal
from app.signals import signals_never_lost
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
