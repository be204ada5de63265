"""A pool of work on Ray: every item of a list worked on once, by this process while Ray starts and then by Ray
actors (each item to the first free one), the results in item order. What the scale-out commands share
(app.episode.sharding's blocks of environments, app.sweep's episodes, app.solve's chunks of targets)."""

from __future__ import annotations

import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait

from app.errors import AppError, InputError
from app.runtime.ray_session import check_reachable, require_ray, start_ray
from app.runtime.signals import wait_in_steps

log = logging.getLogger(__name__)
STOP = threading.Event()  # set when the work in this process must end: an item worked on here stops at its next step


def _actor_class(ray):
    @ray.remote(num_cpus=1)
    class Worker:
        """A worker process on one compute thread (the items are the parallelism)."""

        def __init__(self):
            os.environ["APP_THREADS"] = "1"

        def call(self, work: Callable, i: int, item):
            return i, ray.get_runtime_context().get_node_id(), work(item)

    return Worker


def works_here() -> bool:
    """Whether this process works on items too (APP_SCALE_LOCAL: 1, the default, or 0: only the actors)."""
    value = os.environ.get("APP_SCALE_LOCAL", "1")
    if value not in ("0", "1"):
        raise InputError(f"APP_SCALE_LOCAL must be 1 (this process works on items too; the default) or 0 "
                         f"(only the Ray actors do), got {value!r}")
    return value == "1"


class _WhileRayStarts:
    """Items worked on here, in order, on a thread while Ray starts (~2.4 s of a ~11 s 64-environment QP run;
    without it the run's 1.35x goal at 2 workers is missed); :meth:`close` ends the taking: the actors get the rest."""

    def __init__(self, items: list, work: Callable, done: Callable[[int, object], None]):
        self.next, self.lock, self.open = 0, threading.Lock(), True
        executor = ThreadPoolExecutor(1, thread_name_prefix="local-work")
        self.future = executor.submit(self._loop, items, work, done)
        executor.shutdown(wait=False)  # its thread ends with the loop

    def _take(self, n: int) -> int | None:
        with self.lock:
            if not self.open or self.next >= n:
                return None
            self.next += 1
            return self.next - 1

    def _loop(self, items: list, work: Callable, done: Callable[[int, object], None]) -> None:
        while (i := self._take(len(items))) is not None:
            done(i, work(items[i]))

    def close(self) -> int:
        """Take no more items; returns how many were taken (items 0..n-1)."""
        with self.lock:
            self.open = False
            return self.next


def run_everywhere(items: list, work: Callable, workers: int, address: str | None = None,
                   on_done: Callable[[int], None] | None = None,
                   on_result: Callable[[int, object], None] | None = None) -> tuple[list, dict]:
    """``work(item)`` for every item, each once: this process works on the first items (on a thread) while Ray
    starts (from the main thread, which its processes' lifetime is tied to), then ``workers`` Ray actors take
    the rest through Ray's ActorPool, each item going to the first free actor. ``work`` must be a module-level
    function (it travels to the workers). Returns (the results in item order, timings: ray_start and wall
    [s], items_here, actors (those the cluster can run), nodes (Ray node id -> the items actors there worked
    on)); ``on_done(i)`` as item i finishes (progress), and ``on_result(i, result)`` with what it returned (on
    the thread that took it back). The
    first error raised by ``work`` anywhere is raised here. ``APP_SCALE_LOCAL=0``: this process takes no
    item (tests use it to have every item computed by actors)."""
    require_ray()
    check_reachable(address)  # before this process takes any item: an unreachable cluster costs no work
    t0, results, nodes = time.perf_counter(), {}, {}

    def done(i: int, value) -> None:
        results[i] = value
        if on_done is not None:
            on_done(i)
        if on_result is not None:
            on_result(i, value)

    threads, here = os.environ.get("APP_THREADS"), None
    if works_here():  # its items on one compute thread, as each actor's: a second one would take an actor's core
        os.environ["APP_THREADS"] = "1"
        here = _WhileRayStarts(items, work, done)
    pool, ray_up_s, n_actors, first = None, 0.0, 0, 0
    try:
        ray = start_ray(workers, address)
        ray_up_s = time.perf_counter() - t0
        first = here.close() if here is not None else 0
        n_actors = _actors(ray, workers)
        if first < len(items):
            pool = ray.util.ActorPool([_actor_class(ray).remote() for _ in range(min(n_actors, len(items) - first))])
            for i in range(first, len(items)):
                pool.submit(lambda actor, i: actor.call.remote(work, i, items[i]), i)
            while pool.has_next():
                i, node, value = _owned(_get_next(ray, pool))
                nodes[node] = nodes.get(node, 0) + 1
                done(i, value)
                if here is not None and here.future.done():
                    here.future.result()  # an error here stops the run at once
        if here is not None:
            here.future.result()  # its error, if any
    finally:
        STOP.set()  # an item running here stops at its next tick (a run's block; other work ends with its item)
        if here is not None:
            here.close()
            wait([here.future], timeout=120)  # never left running into the interpreter's exit (PyBullet would crash)
        STOP.clear()
        pool = None  # its actors end with their last handle (one freed after Ray's shutdown would end the process)
        _restore("APP_THREADS", threads)
    timings = {"ray_start": ray_up_s, "wall": time.perf_counter() - t0, "items_here": first, "actors": n_actors,
               "nodes": nodes}
    return [results[i] for i in range(len(items))], timings


def _restore(name: str, value: str | None) -> None:
    """The environment variable ``name`` back to ``value`` (None: unset)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _actors(ray, workers: int) -> int:
    """``workers``, or fewer where the cluster has fewer CPUs (an actor asks for one: more would wait for ever)."""
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < workers:
        log.warning("the Ray cluster has %d CPUs: %d workers instead of %d", cpus, max(cpus, 1), workers)
    return max(1, min(cpus, workers))


def _get_next(ray, pool):
    """The next result any actor finishes, waited for in steps (app.runtime.signals.wait_in_steps: Ray's wait blocks in
    C, where a signal is not handled); a worker's AppError raised as itself (one line for users)."""
    try:
        return wait_in_steps(lambda step_s: pool.get_next_unordered(timeout=step_s))
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, AppError):
            raise exc.cause from None
        raise


def _owned(value):
    """A copy of a value from Ray that owns its memory (Ray's large arrays are views of its object store, which
    ends with Ray's shutdown): what the caller keeps must outlive Ray."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
