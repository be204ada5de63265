"""Scale-out on Ray: a run's environments sharded over worker processes (or machines), same answers.

The environments are cut into a few blocks: a large one for this process, which starts on it while Ray
starts (~2.4 s), one for each Ray actor, and small ones at the end that even out the actors' finishing
times. Each block runs in a PyBullet client (DIRECT) of its own, its environments built where they stand
in the whole grid, with the run's controller and the targets sliced from the draw for all environments; a
block runs its whole episode on one compute thread (environments never interact, so no tick waits for
another worker) and returns its telemetry, final state and video states. The parent merges them in environment
order and writes one report (and renders the video from the gathered states) exactly as a one-process run
does; Ray, when this process started it, shuts down (~0.3 s) while the outputs are written. ``workers: 1``
never imports Ray.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.episode.scene_build import build_scene
from app.config.schema import RunConfig
from app.errors import AppError, InputError
from app.runtime.ray_session import ray_released, require_ray, start_ray
from app.runtime.outputs import OutputSet
from app.render.progress import Progress
from app.episode.loop import RunResult, abandon, final_state, finish, run_targets, simulate, video_job, video_look
from app.runtime.signals import wait_in_steps
from app.sim.scene import grid_origins
from app.episode.video_job import FrameState

log = logging.getLogger(__name__)
STOP = threading.Event()  # set when a run in this process is interrupted: a block running here ends at its next tick
TAIL_BLOCK = 2  # environments in each block that evens out the workers' finishing times


def shares(n_envs: int, workers: int) -> list[np.ndarray]:
    """Environment indices per worker: contiguous, sizes differing by at most one."""
    if not 1 <= workers <= n_envs:
        raise AppError(f"workers must be 1..n_envs={n_envs} (each worker needs an environment), got {workers}")
    return [a for a in np.array_split(np.arange(n_envs), workers)]


def blocks(n_envs: int, workers: int) -> list[np.ndarray]:
    """Contiguous blocks of environment indices for this process and ``workers`` actors: one large block each,
    then a block of ``TAIL_BLOCK`` per actor, taken by whichever actor is free first, to even out their
    finishing times (only when the large blocks stay at least 3x larger: with fewer environments the tail
    would cost more in per-block work than it evens out). Few blocks: each one repeats the control loop's
    fixed work per tick (~0.2 s of CPU per block for a 6 s QP episode)."""
    tail = TAIL_BLOCK * workers if n_envs >= 6 * (workers + 1) else 0
    body = shares(n_envs - tail, min(n_envs - tail, workers + 1))
    return body + [np.arange(start, start + TAIL_BLOCK) for start in range(n_envs - tail, n_envs, TAIL_BLOCK)]


class Shard(NamedTuple):
    """What one worker returns: its environments (k,), their end state and telemetry, its video states, the
    wall-clock span of its simulation (start, end) [s since the epoch] and which process ran it."""

    envs: np.ndarray
    result: RunResult
    frames: list[FrameState]
    timings: dict
    span: tuple[float, float]
    worker: str


def run_shard(run: RunConfig, envs: np.ndarray, record_video: bool) -> Shard:
    """One worker's share of ``run``: the environments ``envs`` simulated in their own PyBullet client."""
    t0 = time.perf_counter()
    scene, robot = build_scene(run, envs=envs)
    build_s = time.perf_counter() - t0
    try:
        targets = run_targets(run, envs=envs, robot=robot)
        frames: list[FrameState] = []
        start = time.time()
        controller, timings = simulate(run, scene, robot, targets, frames.append if record_video else None,
                                       on_tick=lambda k, controller, q: STOP.is_set(), show_progress=False)
        timings["build"] = build_s
        end = final_state(run, robot, controller, targets, scene.t, scene=scene, envs=envs)
        return Shard(envs, end, frames, timings, (start, time.time()), f"{socket.gethostname()}:{os.getpid()}")
    finally:
        scene.close()


def steady_phase(shards: list[Shard], processes: int) -> tuple[float, float]:
    """(seconds from the moment all ``processes`` were simulating to the last block's end, environments'
    episodes simulated in them): the simulation's own pace, start-up aside; (0, 0) when some process never
    got a block. Blocks are taken to advance evenly."""
    first: dict[str, float] = {}
    for s in shards:
        first[s.worker] = min(first.get(s.worker, np.inf), s.span[0])
    if len(first) < processes:
        return 0.0, 0.0
    t0, t1 = max(first.values()), max(s.span[1] for s in shards)
    done = sum(len(s.envs) * max(0.0, s.span[1] - max(s.span[0], t0)) / max(s.span[1] - s.span[0], 1e-9)
               for s in shards)
    return t1 - t0, done


def merge(shards: list[Shard]) -> tuple[RunResult, list[FrameState]]:
    """The shards' results as one run's, environments in order."""
    shards = sorted(shards, key=lambda s: int(s.envs[0]))
    rs = [s.result for s in shards]
    cat = lambda name: np.concatenate([getattr(r, name) for r in rs])  # noqa: E731
    telemetry = {k: (rs[0].telemetry[k] if k == "t" else np.concatenate([r.telemetry[k] for r in rs], axis=1))
                 for k in rs[0].telemetry}
    invariants = {k: np.concatenate([r.invariants[k] for r in rs]) for k in rs[0].invariants}
    result = RunResult(cat("q_final"), cat("ee_pos"), cat("ee_quat"), cat("targets_pos"), cat("targets_quat"),
                       telemetry, invariants, episodes=[ep for r in rs for ep in r.episodes],
                       objects={name: {k: np.concatenate([r.objects[name][k] for r in rs]) for k in o}
                                for name, o in rs[0].objects.items()})
    cat_or_none = lambda parts, f: None if getattr(parts[0], f) is None else np.concatenate(  # noqa: E731
        [getattr(p, f) for p in parts])
    frames = [FrameState(parts[0].t, *(cat_or_none(parts, f) for f in FrameState._fields[1:]))
              for parts in zip(*(s.frames for s in shards))]
    return result, frames


def _actor_class(ray):
    @ray.remote(num_cpus=1)
    class Worker:
        """A worker process on one compute thread (the items are the parallelism)."""

        def __init__(self):
            os.environ["APP_THREADS"] = "1"

        def call(self, work: Callable, i: int, item):
            return i, work(item)

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
                   on_done: Callable[[int], None] | None = None) -> tuple[list, dict]:
    """``work(item)`` for every item, each once: this process works on the first items (on a thread) while Ray
    starts (from the main thread, which its processes' lifetime is tied to), then ``workers`` Ray actors take
    the rest through Ray's ActorPool, each item going to the first free actor. ``work`` must be a module-level
    function (it travels to the workers). Returns (the results in item order, timings: ray_start and wall
    [s], items_here, actors (those the cluster can run)); ``on_done(i)`` as item i finishes (progress). The
    first error raised by ``work`` anywhere is raised here. ``APP_SCALE_LOCAL=0``: this process takes no
    item (tests use it to have every item computed by actors)."""
    require_ray()
    t0, results = time.perf_counter(), {}

    def done(i: int, value) -> None:
        results[i] = value
        if on_done is not None:
            on_done(i)

    here = _WhileRayStarts(items, work, done) if works_here() else None
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
                done(*_owned(_get_next(ray, pool)))
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
    timings = {"ray_start": ray_up_s, "wall": time.perf_counter() - t0, "items_here": first, "actors": n_actors}
    return [results[i] for i in range(len(items))], timings


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
    """A copy of a value from Ray that owns its memory (Ray's large arrays are read from its object store).
    Once, while this process merged shards and Ray shut down on a thread, the process ended with "the core
    worker has already been shutdown"; not reproduced since, with this copy (~1 ms per MB), garbage collected
    before the shutdown and every actor handle dropped."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _shard_of(args: tuple) -> Shard:
    run, envs, record = args
    return run_shard(run, envs, record)


def execute_sharded(run: RunConfig, out_dir: Path, workers: int, address: str | None = None,
                    video: bool = True) -> RunResult:
    """:func:`app.episode.loop.execute` with the environments in blocks run by ``workers`` Ray actors and this process."""
    t_start = time.perf_counter()
    n_envs = run.n_envs or 1
    shares(n_envs, workers)  # checks the count
    works_here()  # and APP_SCALE_LOCAL, before any output
    outputs = OutputSet(out_dir)
    record = video and run.video.enabled
    groups = blocks(n_envs, workers)
    progress = Progress("environments", n_envs, unit="env")
    job = None
    try:
        try:
            shards, timings = run_everywhere([(run, g, record) for g in groups], _shard_of, workers, address,
                                             lambda i: progress.add(len(groups[i])))
        finally:
            progress.close()
        steady_s, steady_envs = steady_phase(shards, timings["actors"] + (1 if timings["items_here"] else 0))
        scale = {"workers": workers, "actors": timings["actors"], "blocks": [len(g) for g in groups],
                 "blocks_here": timings["items_here"],
                 "all_working_s": round(steady_s, 4), "all_working_env_episodes": round(steady_envs, 3)}
        timings = {"ray_start": timings["ray_start"], "blocks": timings["wall"]}
        with ray_released():
            result, frames = merge(shards)
            scene, robot = build_scene(run, envs=np.array([0]))  # the model, and the start pose for the camera
            scene.close()
            if record:
                job = video_job(run, outputs)
                job.start(video_look(run, robot, run_targets(run, robot=robot), grid_origins(n_envs, run.env_spacing)))
                for frame in frames:
                    job.add(frame)
            result.scale = scale
            return finish(run, result, robot.model, outputs, job, timings, t_start)
    except BaseException:
        abandon(outputs, job)
        raise
