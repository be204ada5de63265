"""Where the video's render processes come from: a fork server that loaded their modules once.

Light on purpose (no app imports): ``python -m app.run`` starts the server before it imports the simulation's
own modules, so that the server's imports (~1 s of CPU, app.render_preload) run beside this process's instead
of after them, and the first frames are rendered ~1 s earlier.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
from multiprocessing import forkserver

log = logging.getLogger(__name__)


def render_context():
    """Render processes fork from a server that loaded their modules and kernels once (app.render_preload:
    each starts in 0.05 s of CPU instead of ~0.8 s); never fork this process itself (its threads, PyBullet
    client). The server is started here with SIGINT ignored, which it inherits: a terminal's Ctrl-C reaches
    the whole process group, and the server would print a traceback while it loads its modules (~1 s; it
    ignores SIGINT only after that). Off the main thread (which alone may change signals) the pool starts it."""
    method = os.environ.get("APP_MP", "forkserver")
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["app.render_preload"])
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
