"""Ray's lifetime in this process: started (or joined) when more than one worker is asked for, and shut down
on the way out, interrupted or not, with no Ray process left behind.

A local cluster is a GCS, a raylet and a few helper processes (autoscaler monitor, dashboard, log monitor;
the raylet's agents and workers under it). ``ray.shutdown`` stops them one after another; two of Ray's
habits are handled here: the autoscaler monitor answers SIGTERM by reporting to a GCS that is already gone
and is killed only after a 1 s timeout (so it is killed first), and an agent whose raylet was killed
(when the raylet is slow to stop, e.g. interrupted mid-run) lingers for a minute (so survivors are ended).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from app.errors import AppError

RAY_MISSING = 'more than one worker needs Ray, an optional extra: pip install -e ".[scale]"'
_ours: str | None = None  # the Ray session start_ray started or joined (not one the caller had)
_started: dict[int, bytes] = {}  # the processes start_ray started (pid -> start time), even if interrupted
_shutting_down = threading.Lock()


def require_ray():
    """The ray module, or an AppError that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise AppError(RAY_MISSING) from None
    return ray


CONNECT_TIMEOUT_ENV = "APP_RAY_CONNECT_TIMEOUT"  # [s] to reach a cluster's address before giving up (default 10)


def _check_reachable(address: str) -> None:
    """A TCP connection to ``address`` (HOST:PORT, or ray://HOST:PORT) within the connect timeout; Ray itself
    retries an unreachable address for minutes. 'auto' and other forms are left to Ray."""
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
    global _ours
    ray = require_ray()
    _quiet_ray_notices()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if not ray.is_initialized():
        quiet = dict(logging_level=logging.WARNING, log_to_driver=False, configure_logging=True)
        sigterm = signal.getsignal(signal.SIGTERM)  # ray.init replaces it with sys.exit(15)
        before = _children()
        try:
            if address:
                _check_reachable(address)
                ray.init(address=address, **quiet)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise AppError(f"could not {'join the Ray cluster at ' + address if address else 'start Ray'}: "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        finally:
            _started.update(_ray_children(ray, before))
            if threading.current_thread() is threading.main_thread() and sigterm is not None:
                signal.signal(signal.SIGTERM, sigterm)  # the CLI's: one line, exit 143, no partial file
        _ours = _session(ray)
    return ray


def _session(ray) -> str | None:
    return ray.get_runtime_context().gcs_address if ray.is_initialized() else None


def _is_ours(ray) -> bool:
    return ray is not None and _ours is not None and _session(ray) == _ours


def shutdown_ray() -> None:
    """Stop this process's Ray (the local cluster it started, or its connection to one), if any: the command
    lines call it on the way out, interrupted or not, so no Ray process outlives them. One at a time: a call
    while another thread shuts down waits for it, then has nothing left to do."""
    with _shutting_down:
        _shutdown()


def _shutdown() -> None:
    global _ours
    ray = sys.modules.get("ray")
    family = _family(_started)  # also when an interrupted ray.init left processes and no session
    if ray is not None and ray.is_initialized():
        gc.collect()  # no Ray handle left in garbage: freeing one after the shutdown would end the process
        if family:
            for process in _node_processes(ray).get("monitor", []):
                _kill(process)
        with signal_dispositions_kept():
            ray.shutdown()
    _end_survivors(family)
    _ours = None
    _started.clear()


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


@contextmanager
def ray_released() -> Iterator[None]:
    """The body (writing a command's outputs) runs while Ray shuts down on a thread, if :func:`start_ray`
    started (or joined) it: ray.shutdown stops the cluster's processes one after another (~0.3 s). A Ray the
    caller started stays up. Both are done on exit."""
    thread = threading.Thread(target=shutdown_ray, name="ray-shutdown") if _is_ours(sys.modules.get("ray")) else None
    if thread is not None:
        thread.start()
    try:
        yield
    finally:
        while thread is not None and thread.is_alive():
            thread.join(0.2)  # short waits: a signal reaches this (main) thread at once


def _node_processes(ray) -> dict[str, list]:
    """The local cluster's processes (subprocess.Popen) by Ray's type name; empty when this process joined a
    cluster. Ray's private node object: anything unexpected leaves the work to ray.shutdown."""
    try:
        node = ray._private.worker._global_node
        return {kind: [info.process for info in infos] for kind, infos in node.all_processes.items()} if node else {}
    except AttributeError:
        return {}


def _kill(process) -> None:
    if process.poll() is None:
        process.kill()
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:  # left to ray.shutdown and the survivors' end
            pass


def _children(parent: int | None = None) -> dict[int, bytes]:
    """The child processes of ``parent`` (default: this process): pid -> start time."""
    ppid = str(os.getpid() if parent is None else parent).encode()
    return {pid: stat[19] for pid in _pids() if (stat := _stat(pid)) is not None and stat[1] == ppid}


def _ray_children(ray, before: dict[int, bytes]) -> dict[int, bytes]:
    """The children this process has now and not ``before`` that run Ray's programs (a program or script in
    Ray's package folder): the processes ray.init started, not those another thread started meanwhile (a
    render pool's fork server, whose command line also names that folder, in its sys.path)."""
    package = os.path.dirname(ray.__file__).encode()
    return {pid: start for pid, start in _children().items()
            if pid not in before and any(arg.startswith(package) for arg in _cmdline(pid).split(b"\0"))}


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _family(roots: dict[int, bytes]) -> dict[int, bytes]:
    """The processes ``roots`` (pid -> start time) that still run, and all their descendants: pid -> start time
    (so a reused pid is never touched)."""
    if not roots:
        return {}
    stats = {pid: stat for pid in _pids() if (stat := _stat(pid)) is not None}
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(int(stat[1]), []).append(pid)
    family, todo = {}, [pid for pid, start in roots.items() if _same(pid, start)]
    while todo:
        pid = todo.pop()
        if pid in stats and pid not in family:
            family[pid] = stats[pid][19]
            todo.extend(children.get(pid, ()))
    return family


def _end_survivors(family: dict[int, bytes], grace_s: float = 1.0) -> None:
    """SIGTERM, then after ``grace_s`` SIGKILL, what is left of ``family`` once ray.shutdown returned."""
    alive = lambda: [pid for pid, start in family.items() if _same(pid, start)]  # noqa: E731
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        left = alive()
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait_s
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = alive()


def _same(pid: int, start: bytes) -> bool:
    """Whether ``pid`` still runs (not a zombie) and is the process that started at ``start``."""
    stat = _stat(pid)
    return stat is not None and stat[19] == start and stat[0] != b"Z"


def _pids() -> list[int]:
    try:
        return [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:  # no /proc (not Linux): ray.shutdown alone
        return []


def _stat(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat after the command name: [state, ppid, ...]; None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
