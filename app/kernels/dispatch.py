"""Run a compiled, GIL-free batch kernel over chunks of a batch on a few threads.

Numba's ``parallel=True`` compiles a second copy of every kernel (measured: +24 s on the first
run of the main job); kernels compiled with ``nogil=True`` and split over threads here give the
same speed-up on this 2-core machine at no extra compile time. Results do not depend on the
number of threads: every problem is solved independently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from app.errors import InputError

MIN_CHUNK = 24  # problems per thread below which one thread is faster (scripts/bench_threads.py: a hand-over
# costs ~0.04 ms; tracking problems take ~5 us each, so two threads pay from ~32-48 problems)
_pool: ThreadPoolExecutor | None = None
BACKGROUND_NICE = 10  # CFS gives a nice-10 thread ~1/10 of a nice-0 thread's share of a core they both want


def available_cpus() -> int:
    """The CPUs this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def run_in_background(nice: int = BACKGROUND_NICE) -> None:
    """Let the calling thread yield the CPU to the rest of the program: its nice value raised to at least ``nice``
    (Linux keeps one per thread; the threads and processes it starts from now on inherit it). Background work
    (the video's render processes and encoder) then runs on the cores the simulation leaves idle instead of
    taking a share of its core. Best effort: where the OS refuses, nothing changes."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, max(nice, os.getpriority(os.PRIO_PROCESS, 0)))
    except (AttributeError, OSError):  # no setpriority (Windows), or not allowed
        pass


def n_threads() -> int:
    """Threads to use: APP_THREADS if set, else :func:`available_cpus`."""
    env = os.environ.get("APP_THREADS")
    if env:
        if not env.strip().isdigit() or int(env) < 1:
            raise InputError(f"APP_THREADS must be a whole number >= 1 (threads for batched IK), got {env!r}")
        return int(env)
    return available_cpus()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(1, n_threads() - 1), thread_name_prefix="app-kernel")
    return _pool


def chunked(kernel: Callable, batch: int, per_problem: Sequence[np.ndarray], shared: Sequence) -> tuple:
    """``kernel(*per_problem_slices, *shared)`` over contiguous chunks; outputs concatenated on axis 0.

    Args:
        kernel: A nogil compiled function returning a tuple of arrays with the batch on axis 0.
        batch: Batch size B. per_problem: Arrays of leading size B (or 1: broadcast, not sliced).
        shared: Arguments passed unchanged.
    """
    threads = min(n_threads(), batch // MIN_CHUNK) if batch >= 2 * MIN_CHUNK else 1
    if threads <= 1:
        return kernel(*per_problem, *shared)
    bounds = np.linspace(0, batch, threads + 1).astype(int)

    def run(a: int, b: int):
        return kernel(*[x if x.shape[0] == 1 else x[a:b] for x in per_problem], *shared)

    rest = [_executor().submit(run, a, b) for a, b in zip(bounds[1:-1], bounds[2:])]
    parts = [run(bounds[0], bounds[1])] + [f.result() for f in rest]  # the first chunk on this thread
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(len(parts[0])))


def kernel_array(a: object, dtype: type = float) -> np.ndarray:
    """``a`` as an argument of a compiled kernel that varies per call (targets, points): C-contiguous and writeable,
    a copy where it is not (np.broadcast_to gives read-only views). Numba compiles a separate copy of a kernel for
    read-only arrays (10-35 s of CPU per large kernel on 2 cores, at the first run of a fresh checkout), so each
    such argument keeps one kind; tables kept in caches are read-only on every call instead."""
    return np.require(a, dtype=dtype, requirements=("C", "W"))


def entry_point(kernel, args: Sequence) -> Callable:
    """The compiled function ``kernel`` (a numba dispatcher) runs for arguments typed as ``args``, to call
    directly: it skips the dispatcher's typing of every argument on each call (NamedTuples of arrays are
    typed in Python, ~0.1-0.4 us per array). Only for calls whose arguments have exactly these types
    (dtypes, dimensions, C layout): callers keep their static arguments and build the others alike."""
    from numba import typeof

    kernel(*args)  # compiled (or loaded from the cache) for these types
    return kernel.overloads[tuple(typeof(a) for a in args)].entry_point


class EntryPoints:
    """Compiled kernels of a loop called directly after their first call (:func:`entry_point`), one per key: for
    calls whose arguments keep their types (dtypes, dimensions, C layout) from call to call; the caller makes them
    so (np.ascontiguousarray with the dtype) and keeps its static ones. It pays where NamedTuples of arrays are
    passed (their typing costs ~0.1-0.4 us per array); for plain arrays numba's own dispatch is as fast (measured:
    a kernel of one array 1.6 us dispatched, 2.5 us through here)."""

    def __init__(self):
        self._entries: dict = {}

    def __call__(self, key: Hashable, kernel, args: Sequence):
        """``kernel(*args)``, through the entry compiled for the first call's ``args`` under ``key`` (a name, or
        whatever tells the calls of different argument types apart)."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = entry_point(kernel, args)
        return entry(*args)
