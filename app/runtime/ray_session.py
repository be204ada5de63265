"""Ray's lifetime in this process: started (or joined) when more than one worker is asked for, and shut down
on the way out, interrupted or not, with no Ray process left behind.

A local cluster is a GCS, a raylet and a few helper processes (autoscaler monitor, dashboard, log monitor;
the raylet's agents and workers under it). ``ray.shutdown`` stops them one after another; what is left of the
processes ray.init started, descendants included (psutil's process tree), is then stopped (SIGSTOP, so none
starts another) and killed: an agent whose raylet was killed lingers for a minute, and a raylet interrupted
while it starts (ray.init cut short by a Ctrl-C: no session to shut down) starts its agents even when told to
stop. The autoscaler monitor answers SIGTERM by reporting to a GCS that is already gone and is killed only
after a 1 s timeout, so it is killed first (measured: ray.shutdown 1.16-1.37 s -> 0.40-0.45 s; found by the
script it runs: the one pinned exception, see ``MONITOR_SCRIPT``)."""

from __future__ import annotations

import gc
import logging
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

from app.errors import AppError
from app.runtime.signals import signal_dispositions_kept, signals_never_lost

RAY_MISSING = 'more than one worker needs Ray, an optional extra: pip install -e ".[scale]"'
_ours: str | None = None  # the Ray session start_ray started or joined (not one the caller had)
_started: list[psutil.Process] = []  # what start_ray started, even if interrupted (psutil: never a reused pid)
_before: set[int] = set()  # this process's children before ray.init (what ray.init started is the rest)
_began = False  # start_ray called ray.init (it may have been interrupted before _ours was set)
# Ray's autoscaler monitor, by the script its process runs (Ray's file layout, not an API: ray is pinned in
# pyproject.toml to the versions tests/test_ray_session.py checks it on; should it move, the test fails and
# ray.shutdown alone stops the monitor, 0.8 s slower)
MONITOR_SCRIPT = os.path.join("autoscaler", "_private", "monitor.py")
_shutting_down = threading.Lock()
_temp_dirs: list[str] = []  # the session folders of the local clusters start_ray started


def require_ray():
    """The ray module, or an AppError that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise AppError(RAY_MISSING) from None
    return ray


CONNECT_TIMEOUT_ENV = "APP_RAY_CONNECT_TIMEOUT"  # [s] to reach a cluster's address before giving up (default 10)


def check_reachable(address: str | None) -> None:
    """A TCP connection to ``address`` (HOST:PORT, or ray://HOST:PORT; None: $RAY_ADDRESS, else nothing to check)
    within the connect timeout, or AppError; Ray itself retries an unreachable address for minutes. 'auto' and
    other forms are left to Ray. Commands call it before any work, ``start_ray`` again when it joins."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is None:
        return
    text = os.environ.get(CONNECT_TIMEOUT_ENV, "10")
    try:
        timeout = float(text)
    except ValueError:
        timeout = math.nan
    if not 0 < timeout <= 3600:
        raise AppError(f"{CONNECT_TIMEOUT_ENV}={text!r}: must be seconds in (0, 3600]")
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise AppError(f"could not reach the Ray cluster at {address} within {timeout:g} s ({exc.strerror or exc}); "
                       f"check the address (--ray-address or RAY_ADDRESS), or set {CONNECT_TIMEOUT_ENV}=SECONDS "
                       "to wait longer") from None


class _NoTokenNotice(logging.Filter):
    """Drops Ray's notice that token authentication is on (printed at every ray.init; auth stays on)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Token authentication is enabled" not in record.getMessage()


def _quiet_ray_notices() -> None:
    for handler in logging.getLogger("ray").handlers:  # Ray's own console handler, through logging's API
        if not any(isinstance(f, _NoTokenNotice) for f in handler.filters):
            handler.addFilter(_NoTokenNotice())


def start_ray(workers: int, address: str | None = None):
    """Join the cluster at ``address`` (or $RAY_ADDRESS), else start a local one with ``workers`` CPUs."""
    global _ours, _began
    ray = require_ray()
    _quiet_ray_notices()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # Ray's documented opt-out: nothing leaves this machine
        quiet = dict(logging_level=logging.WARNING, log_to_driver=False, configure_logging=True)
        before = {p.pid for p in psutil.Process().children()}
        _before.clear()
        _before.update(before)
        _began = True
        try:
            with signals_never_lost():
                if address:
                    check_reachable(address)
                    ray.init(address=address, **quiet)
                else:  # its session folder (logs, sockets) ours, removed at shutdown, not $TMPDIR/ray's
                    _temp_dirs.append(_session_folder())
                    ray.init(num_cpus=workers, include_dashboard=False, _temp_dir=_temp_dirs[-1], **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise AppError(f"could not {'join the Ray cluster at ' + address if address else 'start Ray'}: "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        finally:
            _started.extend(tree(_ray_children(ray, before)))  # their children too: the raylet's agents
        _ours = _session(ray)
    return ray


# Ray's longest socket path below its temp dir (sockets/plasma_store in a session_<date>_<pid> folder) must fit
# AF_UNIX's 107 bytes
_SOCKET_TAIL = len("/app-ray-xxxxxxxx/session_2026-01-01_00-00-00_000000_4194304/sockets/plasma_store")


def _session_folder() -> str:
    """A new folder for a local cluster's session (logs, sockets): in $TMPDIR, or /tmp where $TMPDIR is too long
    for Ray's sockets."""
    base = tempfile.gettempdir()
    return tempfile.mkdtemp(prefix="app-ray-", dir=base if len(base) + _SOCKET_TAIL <= 107 else "/tmp")


def _session(ray) -> str | None:
    return ray.get_runtime_context().gcs_address if ray.is_initialized() else None


def _is_ours(ray) -> bool:
    return ray is not None and _ours is not None and _session(ray) == _ours


def shutdown_ray() -> None:
    """Stop the Ray that :func:`start_ray` started or joined (a local cluster, or a connection to one), if any: the
    command lines call it on the way out, interrupted or not, so no Ray process of theirs outlives them; a Ray the
    caller had initialised before stays up. One at a time: a call while another thread shuts down waits for it,
    then has nothing left to do."""
    with _shutting_down:
        _shutdown()


def _shutdown() -> None:
    global _ours, _began
    ray = sys.modules.get("ray")
    if ray is not None and _began:  # a program ray.init had just started when it was interrupted
        _started.extend(_ray_children(ray, _before))
    family = tree(_started)  # also when an interrupted ray.init left processes and no session
    if ray is not None and ray.is_initialized() and _began:  # a caller's own Ray stays up
        gc.collect()  # no Ray handle left in garbage: freeing one after the shutdown would end the process
        monitors = [p for p in family if _runs_script(p, MONITOR_SCRIPT)]
        end_processes(monitors, grace_s=0.0)
        with signal_dispositions_kept():
            ray.shutdown()
    end_processes(frozen_tree(family), grace_s=0.0)  # killed as they stand: a raylet told to stop started its agents
    while _temp_dirs:
        shutil.rmtree(_temp_dirs.pop(), ignore_errors=True)
    _ours, _began = None, False
    _started.clear()
    _before.clear()


@contextmanager
def ray_released() -> Iterator[None]:
    """The body (writing a command's outputs) runs while Ray shuts down on a thread, if :func:`start_ray`
    started (or joined) it: ray.shutdown stops the cluster's processes one after another (~0.4 s). A Ray the
    caller started stays up. Both are done on exit."""
    thread = threading.Thread(target=shutdown_ray, name="ray-shutdown") if _is_ours(sys.modules.get("ray")) else None
    if thread is not None:
        thread.start()
    try:
        yield
    finally:
        if thread is not None:
            thread.join()  # a signal still reaches this (main) thread at once: lock waits are interruptible


def _ray_children(ray, before: set[int]) -> list[psutil.Process]:
    """The children this process has now and not ``before`` that run Ray's programs (a program or script in
    Ray's package folder): the processes ray.init started, not those another thread started meanwhile (a
    render pool's fork server, whose command line also names that folder, in its sys.path)."""
    package = os.path.dirname(ray.__file__)
    return [p for p in psutil.Process().children() if p.pid not in before
            and any(arg.startswith(package) for arg in _cmdline(p))]


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _runs_script(process: psutil.Process, script: str) -> bool:
    return any(arg.endswith(script) for arg in _cmdline(process))


def running(process: psutil.Process) -> bool:
    """Whether ``process`` (the very process, not a later one with its pid) still runs and is no zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def tree(roots: list[psutil.Process]) -> list[psutil.Process]:
    """The processes of ``roots`` that still run, and all their descendants."""
    found: dict[int, psutil.Process] = {}
    for root in roots:
        if running(root):
            try:
                found.update({p.pid: p for p in [root, *root.children(recursive=True)]})
            except psutil.Error:
                pass
    return list(found.values())


def frozen_tree(roots: list[psutil.Process]) -> list[psutil.Process]:
    """The processes of ``roots`` that still run and all their descendants, each stopped (SIGSTOP) before its
    children are listed, so that none starts another meanwhile: a raylet interrupted while it starts its agents
    left them running, orphaned, for a minute."""
    found: dict[int, psutil.Process] = {}
    todo = [p for p in roots if running(p)]
    while todo:
        process = todo.pop()
        if process.pid in found:
            continue
        try:
            process.suspend()
            deadline = time.monotonic() + 5.0  # stopped once the kernel delivered the signal (a fork completes first)
            while process.status() not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE) and time.monotonic() < deadline:
                time.sleep(0.002)
            found[process.pid] = process
            todo.extend(process.children())
        except psutil.Error:
            pass
    return list(found.values())


def end_processes(processes: list[psutil.Process], grace_s: float = 1.0) -> None:
    """SIGTERM, then after ``grace_s`` SIGKILL, what still runs of ``processes`` (each waited for up to 1 s;
    a stopped one is continued after its SIGTERM)."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 1.0)):
        left = [p for p in processes if running(p)]
        if not left or (sig == signal.SIGTERM and grace_s <= 0):
            continue
        for process in left:
            try:
                process.send_signal(sig)
                process.resume()
            except psutil.Error:
                pass
        deadline = time.monotonic() + wait_s
        while any(running(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.02)
