"""An X display of the test's own for the GUI tests: Xvfb picks a free display number itself (``-displayfd``), so
two copies of the suite (or two pytest-xdist workers) never race for one, as two ``xvfb-run -a`` can."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator

HAVE_XVFB = shutil.which("Xvfb") is not None


@contextlib.contextmanager
def xvfb(screen: str = "1280x800x24") -> Iterator[dict[str, str]]:
    """A running Xvfb with one screen of ``screen`` (WxHxDEPTH); yields the environment (os.environ with its
    DISPLAY) for the processes that should draw there, and ends the server after."""
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp"],
                              pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_fd)
    with os.fdopen(read_fd) as ready:  # Xvfb writes its display number once it accepts clients; EOF if it died
        number = ready.readline().strip()
    try:
        if not number.isdigit():
            raise RuntimeError(f"Xvfb did not start: {server.communicate(timeout=10)[1].decode()[-500:]}")
        # llvmpipe (Mesa's software OpenGL under Xvfb) renders on a thread per core by default: one thread keeps a
        # GUI test from taking both cores of a small machine from the other tests (the pictures are the same)
        yield {"LP_NUM_THREADS": "0", **os.environ, "DISPLAY": f":{number}"}
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
