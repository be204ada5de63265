"""Where the video's render processes come from: a fork server that loaded their modules once.

Light on purpose (no app imports): ``python -m app.run`` starts the server while the package itself is still
being imported (:func:`start_early`, called from ``app/__init__.py``), so that the server's imports (~1.2 s of
CPU, app.episode.render_preload) run on the core that the command's own imports leave idle, instead of on the one the
renders need while the simulation runs.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing as mp
import os
import signal
import sys
import threading
import traceback
from multiprocessing import forkserver

import psutil

log = logging.getLogger(__name__)
_early: list[psutil.Process] = []  # the processes start_early started, for stop_early


def quiet_orphan_start(exc_type, exc, tb) -> None:
    """sys.excepthook of the server and the processes it forks: a render process whose run ended while it was
    being forked fails to read what the run sent it (the run's semaphores or pipe are gone: FileNotFoundError,
    EOFError, ...) before any code of ours runs; it ends without a traceback on the user's terminal, where the run
    has already said why it stopped. Any other error is printed as Python prints it."""
    frames = traceback.extract_tb(tb)
    if issubclass(exc_type, OSError | EOFError) and frames and all("multiprocessing" in f.filename for f in frames):
        return
    sys.__excepthook__(exc_type, exc, tb)


def render_context():
    """Render processes fork from a server that loaded their modules and kernels once (app.episode.render_preload:
    each starts in 0.05 s of CPU instead of ~0.8 s); never fork this process itself (its threads, PyBullet
    client). The server is started here with SIGINT ignored, which it inherits: a terminal's Ctrl-C reaches
    the whole process group, and the server would print a traceback while it loads its modules (~1 s; it
    ignores SIGINT only after that). Off the main thread (which alone may change signals) the pool starts it."""
    method = os.environ.get("APP_MP", "forkserver")
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["app.episode.render_preload"])
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                forkserver.ensure_running()  # ~1 ms: the server loads its modules on its own
            except OSError as exc:  # its Unix socket lives in TMPDIR, whose path may be too long for one (108 bytes)
                log.info("render processes start afresh (spawn): the fork server could not start: %s", exc)
                return mp.get_context("spawn")
            finally:
                signal.signal(signal.SIGINT, previous)
    return ctx


def start_early(argv: list[str]) -> None:
    """The server started ~0.05 s into ``python -m app.run ...`` (``argv``: ``sys.orig_argv``), before the run's own
    imports (~0.6 s): the first frames then come sooner and the main job with its video ends ~0.7 s earlier
    (5.76 -> 5.07 s, medians of 5, 2 cores). Not where the command line rules the video out (--no-video, --gui,
    --help); where the run file turns it off, the server loads its modules in vain (~1.2 s of CPU on the other
    core) and ends with the command."""
    try:
        module = argv[argv.index("-m") + 1]
    except (ValueError, IndexError):
        return
    if module == "app.run" and not {"--no-video", "--gui", "-h", "--help"} & set(argv):
        before = {child.pid for child in psutil.Process().children()}
        notice = os.environ.get("APP_COMPILE_NOTICE")
        os.environ["APP_COMPILE_NOTICE"] = "shown"  # the package's compile notice: this process prints it, once
        try:
            render_context()
        finally:
            if notice is None:
                del os.environ["APP_COMPILE_NOTICE"]
        # every new child (the server, multiprocessing's resource tracker): one may not have exec'd its program yet,
        # so stop_early tells the server by its command line then
        _early.extend(child for child in psutil.Process().children() if child.pid not in before)
        atexit.register(stop_early)  # also where the command ends before run_cli (an argparse error)


def stop_early() -> None:
    """Ends the server :func:`start_early` started, as the command ends. Its render processes are done by then;
    but after an early error or a Ctrl-C it may still be loading its modules, holding the command's stdout and
    stderr open for ~1 s more (up to 9 s on a busy machine), so that a pipe reading them (``2>&1 | tail``, a
    test's capture) waited for it after the command had ended."""
    for child in _early:
        if not any("forkserver" in arg for arg in _cmdline(child)):
            continue  # the resource tracker ends on its own as this process's pipe to it closes
        try:
            child.kill()
            child.wait(timeout=10)
        except (psutil.Error, psutil.TimeoutExpired):
            pass
    _early.clear()


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []
