"""A pool of work on Ray: every item of a list worked on once, by this process and Ray actors together (each item
to the first free one: this process takes items from the start, while Ray starts, to the end), the results in item
order. What the scale-out commands share (app.episode.sharding's blocks of environments, app.sweep's episodes,
app.solve's chunks of targets, app.eval's jobs)."""

from __future__ import annotations

import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Protocol

from app.errors import AppError, InputError
from app.runtime.ray_session import check_reachable, require_ray, start_ray
from app.runtime.signals import wait_in_steps

log = logging.getLogger(__name__)
STOP = threading.Event()  # set when the work in this process must end: an item worked on here stops at its next step


MAX_RESTARTS = 2  # a Ray worker that dies (killed, out of memory) is restarted this often and its item retried


class WorkerLost(AppError):
    """A Ray worker died working on ``item`` more often than it may be restarted: the item's result is lost."""

    def __init__(self, item: int, cause: str):
        super().__init__(f"a Ray worker died working on item {item} and was restarted {MAX_RESTARTS} times "
                         f"already: item {item} is lost, the run stops ({cause})")
        self.item = item


def _actor_class(ray):
    @ray.remote(num_cpus=1, max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS)
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


class Dispenser(Protocol):
    """Hands out the items of a :func:`run_everywhere` call, each once (thread-safe): ``take(worker)`` the index of
    the next item for a free worker (0: this process; 1, 2, ...: the actors), None when none is left; ``finished``
    with what it returned; ``left()`` how many more :meth:`take` may still hand out (at most); ``items`` those
    made so far (a dispenser may cut them as it goes, from what it learns of the workers' pace)."""

    items: list

    def take(self, worker: int) -> int | None: ...

    def finished(self, i: int, worker: int, result) -> None: ...

    def left(self) -> int: ...

    def close(self) -> None: ...


class InOrder:
    """A list's items, in order, each to whichever worker asks first; :meth:`close` ends the handing out."""

    def __init__(self, items: list):
        self.items, self.next, self.lock = items, 0, threading.Lock()

    def take(self, worker: int) -> int | None:
        with self.lock:
            if self.next >= len(self.items):
                return None
            self.next += 1
            return self.next - 1

    def finished(self, i: int, worker: int, result) -> None:
        pass

    def left(self) -> int:
        with self.lock:
            return len(self.items) - self.next

    def close(self) -> None:
        with self.lock:
            self.next = len(self.items)


class _Here:
    """This process as worker 0: items from the dispenser worked on one after another on a thread (from the moment
    the run starts, while Ray starts, until none is left); ``taken`` counts them."""

    def __init__(self, source: Dispenser, work: Callable, done: Callable[[int, int, object], None]):
        self.taken = 0
        executor = ThreadPoolExecutor(1, thread_name_prefix="local-work")
        self.future: Future = executor.submit(self._loop, source, work, done)
        executor.shutdown(wait=False)  # its thread ends with the loop

    def _loop(self, source: Dispenser, work: Callable, done: Callable[[int, int, object], None]) -> None:
        while (i := source.take(0)) is not None:
            self.taken += 1
            done(i, 0, work(source.items[i]))

    def raise_failure(self) -> None:
        """Its error, if it has ended with one (the first error anywhere stops the run)."""
        if self.future.done():
            self.future.result()


def run_everywhere(items: list | Dispenser, work: Callable, workers: int, address: str | None = None,
                   on_done: Callable[[int], None] | None = None,
                   on_result: Callable[[int, object], None] | None = None) -> tuple[list, dict]:
    """``work(item)`` for every item (a list, or a :class:`Dispenser` that cuts them), each once, by ``workers``
    processes: this one (on a thread, from the start: Ray starts meanwhile, from the main thread, which its
    processes' lifetime is tied to) and ``workers - 1`` Ray actors, each item going to the first free worker,
    a list's in order (so items largest first even out the finishing times). A local cluster is started with a
    CPU per actor. ``work`` must be a module-level function (it travels to the actors). Returns (the results in
    item order, timings: ray_start and wall [s], items_here, actors (those the cluster can run), nodes (Ray node id
    -> the items actors there worked on)); ``on_done(i)`` as item i finishes (progress), and ``on_result(i,
    result)`` with what it returned (one item at a time, on the thread that took it back). The first error raised
    by ``work`` anywhere is raised here. ``APP_SCALE_LOCAL=0``: this process takes no item and ``workers`` actors
    take them all (tests use it to have every item computed by actors)."""
    require_ray()
    check_reachable(address)  # before this process takes any item: an unreachable cluster costs no work
    source = items if hasattr(items, "take") else InOrder(items)
    t0, results, nodes, lock = time.perf_counter(), {}, {}, threading.Lock()

    def done(i: int, worker: int, value) -> None:
        with lock:
            results[i] = value
            source.finished(i, worker, value)
            if on_done is not None:
                on_done(i)
            if on_result is not None:
                on_result(i, value)

    threads, here = os.environ.get("APP_THREADS"), None
    if works_here():  # its items on one compute thread, as each actor's: a second one would take an actor's core
        os.environ["APP_THREADS"] = "1"
        here = _Here(source, work, done)
    wanted = workers - 1 if here is not None else workers
    ray_up_s, n_actors = 0.0, 0
    try:
        if wanted > 0 and source.left() > 0:  # nothing left once this process took its first item: no Ray
            ray = start_ray(wanted, address)
            ray_up_s = time.perf_counter() - t0
            n_actors = _actors(ray, wanted, here is not None)
            _on_actors(ray, source, work, n_actors, done, nodes, here)
        if here is not None:
            wait_in_steps(lambda step_s: here.future.result(timeout=step_s))  # its last item, or its error
    finally:
        source.close()
        STOP.set()  # an item running here stops at its next tick (a run's block; other work ends with its item)
        if here is not None:
            wait([here.future], timeout=120)  # never left running into the interpreter's exit (PyBullet would crash)
        STOP.clear()
        _restore("APP_THREADS", threads)
    timings = {"ray_start": ray_up_s, "wall": time.perf_counter() - t0,
               "items_here": here.taken if here is not None else 0, "actors": n_actors, "nodes": nodes}
    return [results[i] for i in range(len(source.items))], timings


def _on_actors(ray, source: Dispenser, work: Callable, n_actors: int, done: Callable[[int, int, object], None],
               nodes: dict, here: _Here | None) -> None:
    """What ``source`` has left worked on by up to ``n_actors`` new actors (workers 1, 2, ...), each taking the next
    item as it is free, until none is left; ``nodes`` counts the items by the node of the actor that worked on them."""
    running: dict = {}  # the item's result (an ObjectRef) -> (the worker's number, its actor, the item)

    def feed(worker: int, actor) -> None:
        if (i := source.take(worker)) is not None:
            running[actor.call.remote(work, i, source.items[i])] = (worker, actor, i)

    try:
        worker_class = _actor_class(ray)
        for worker in range(1, 1 + min(n_actors, source.left())):
            feed(worker, worker_class.remote())
        while running:
            ref = wait_in_steps(lambda step_s: _first_ready(ray, list(running), step_s, here))
            worker, actor, item = running.pop(ref)
            i, node, value = _owned(_result(ray, ref, item))
            nodes[node] = nodes.get(node, 0) + 1
            done(i, worker, value)
            feed(worker, actor)
    finally:
        running.clear()  # the actors end with their last handle (one freed after Ray's shutdown would end the process)
        actor = None  # noqa: F841 (nor is one kept by a traceback's frame)


def _first_ready(ray, refs: list, step_s: float, here: _Here | None):
    """The first of ``refs`` that is ready, within ``step_s`` (else TimeoutError); an error of this process's own
    work raised at once."""
    if here is not None:
        here.raise_failure()
    ready, _ = ray.wait(refs, num_returns=1, timeout=step_s)
    if not ready:
        raise TimeoutError
    return ready[0]


def _result(ray, ref, item: int):
    """What an actor returned for ``item``; its AppError raised as itself (one line for users); a worker that
    died more often than it may be restarted: WorkerLost."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, AppError):
            raise exc.cause from None
        raise
    except ray.exceptions.RayActorError as exc:
        raise WorkerLost(item, str(exc).strip().splitlines()[0][:200]) from None


def _restore(name: str, value: str | None) -> None:
    """The environment variable ``name`` back to ``value`` (None: unset)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _actors(ray, wanted: int, here: bool) -> int:
    """``wanted`` actors, or fewer where the cluster has fewer CPUs (an actor asks for one: more would wait for ever)."""
    cpus = int(ray.cluster_resources().get("CPU", 0))
    n = max(1, min(cpus, wanted))
    if cpus < wanted:
        log.warning("the Ray cluster has %d CPUs: %d workers instead of %d", cpus, n + here, wanted + here)
    return n


def _owned(value):
    """A copy of a value from Ray that owns its memory (Ray's large arrays are views of its object store, which
    ends with Ray's shutdown): what the caller keeps must outlive Ray."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
