"""How signals reach the main thread, where Python runs their handlers (app.runtime.command's: one line, exit 130/143).

Python's own waits (Thread.join, Event.wait, concurrent.futures.wait, queue.get) are interrupted by a signal
at once, with or without a timeout: they need nothing. What is here covers the rest: a wait that blocks in a
library's C code (Ray's), a step that must not be cut in half by a signal, a signal whose exception Python
drops, and a library that changes how signals are handled behind Python's back.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
WAIT_STEP_S = 0.2  # [s] a wait that blocks in C returns to Python this often (a signal is handled in between)


def wait_in_steps(wait: Callable[[float], T], timeout_s: float | None = None, step_s: float = WAIT_STEP_S,
                  timed_out: type[BaseException] | tuple = TimeoutError) -> T:
    """``wait(step_s)`` again until it returns without raising ``timed_out``, for at most ``timeout_s`` [s]
    (None: no limit; then the last TimeoutError is raised). For waits that block in C, where Python runs a
    signal's handler only when the call returns (one blocking Ray wait held a SIGTERM back until every block of
    the run had finished: 69 s in a 60 s run)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        step = step_s if deadline is None else max(0.0, min(step_s, deadline - time.monotonic()))
        try:
            return wait(step)
        except timed_out:
            if deadline is not None and time.monotonic() >= deadline:
                raise


@contextmanager
def signals_held(signals=(signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """``signals`` blocked for this thread during the body, delivered (their handlers run) right after it. For a
    step that must not be cut in half: a Ctrl-C inside Thread.start (which waits for the thread to run) left a
    thread that ran but could not be joined, and the job's abort raised again (a traceback)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextmanager
def signals_never_lost(signals=(signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """The body runs with this (main) thread's Python handlers of ``signals`` (the CLI's: KeyboardInterrupt,
    Terminated) noting each signal, and put back after it (ray.init replaces SIGTERM's with sys.exit(15)); a
    signal whose exception was lost is handled again once the body ends. Python drops an exception raised in an
    at-fork callback ("Exception ignored in _releaseLock": ray.init forks its programs, and logging releases
    its lock after each fork), and a Ctrl-C during ray.init let the run go on to its end; the traceback Python
    prints of such a lost exception (sys.unraisablehook) is left out, since the signal is handled after all."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in signals}
    came: list[int] = []

    def noted(signum, frame):
        came.append(signum)
        previous[signum](signum, frame)

    def lost_quietly(unraisable):  # Python would print the lost exception's traceback ("Exception ignored in")
        if not (came and isinstance(unraisable.exc_value, BaseException)
                and not isinstance(unraisable.exc_value, Exception)):
            hook(unraisable)

    for sig, handler in previous.items():
        if callable(handler):
            signal.signal(sig, noted)
    hook, sys.unraisablehook = sys.unraisablehook, lost_quietly
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)
    for signum in came[:1]:  # the body ended although a signal came: its exception was lost
        previous[signum](signum, None)


class _SigAction(ctypes.Structure):  # glibc's struct sigaction (x86_64, aarch64): saved and restored whole
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


@contextmanager
def signal_dispositions_kept(signals=(signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """The body may not change how the process handles ``signals``: ray.shutdown resets SIGTERM to the default
    at the C level (while Python still believes its handler is installed), so a SIGTERM while a command wrote
    its outputs killed it outright, leaving a partial file. The C-level actions are saved and put back through
    libc's sigaction, from any thread; where libc cannot be reached, nothing is done."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        saved = {sig: _SigAction() for sig in signals}
        for sig, action in saved.items():
            if libc.sigaction(int(sig), None, ctypes.byref(action)) != 0:
                raise OSError(ctypes.get_errno(), "sigaction")
    except (OSError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        for sig, action in saved.items():
            libc.sigaction(int(sig), ctypes.byref(action), None)
