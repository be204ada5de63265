"""Scale-out on Ray: a run's environments sharded over worker processes (or machines), same answers.

Each Ray actor owns a PyBullet client (DIRECT) with its share of the environments, built where they
stand in the whole grid, the run's controller and the targets of its environments sliced from the draw
for all of them; it runs the whole episode on one compute thread (environments never interact, so no
tick needs to wait for another worker) and returns its telemetry, final state and recorded video states.
The parent merges them in environment order and writes one report (and renders the video from the
gathered states) exactly as a one-process run does. ``workers: 1`` never imports Ray.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.build import build_scene
from app.config.schema import RunConfig
from app.control.tasks import TargetGenerator
from app.errors import AppError
from app.render.outputs import OutputSet
from app.render.progress import Progress
from app.runner import RunResult, final_state, finish, simulate, video_job, video_look
from app.sim.scene import grid_origins
from app.video_job import FrameState

log = logging.getLogger(__name__)
RAY_MISSING = 'more than one worker needs Ray, an optional extra: pip install -e ".[scale]"'


def require_ray():
    """The ray module, or an AppError that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise AppError(RAY_MISSING) from None
    return ray


def start_ray(workers: int, address: str | None = None):
    """Join the cluster at ``address`` (or $RAY_ADDRESS), else start a local one with ``workers`` CPUs."""
    ray = require_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if not ray.is_initialized():
        quiet = dict(logging_level=logging.WARNING, log_to_driver=False, configure_logging=True)
        try:
            if address:
                ray.init(address=address, **quiet)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise AppError(f"could not {'join the Ray cluster at ' + address if address else 'start Ray'}: "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return ray


def shares(n_envs: int, workers: int) -> list[np.ndarray]:
    """Environment indices per worker: contiguous, sizes differing by at most one."""
    if not 1 <= workers <= n_envs:
        raise AppError(f"workers must be 1..n_envs={n_envs} (each worker needs an environment), got {workers}")
    return [a for a in np.array_split(np.arange(n_envs), workers)]


class Shard(NamedTuple):
    """What one worker returns: its environments (k,), their end state and telemetry, its video states."""

    envs: np.ndarray
    result: RunResult
    frames: list[FrameState]
    timings: dict


def run_shard(run: RunConfig, envs: np.ndarray, record_video: bool) -> Shard:
    """One worker's share of ``run``: the environments ``envs`` simulated in their own PyBullet client."""
    scene, robot = build_scene(run, envs=envs)
    try:
        targets = TargetGenerator(run.task, run.n_envs or 1, np.array(run.scene_config.robot.base_pos), run.seed,
                                  envs=envs)
        frames: list[FrameState] = []
        controller, timings = simulate(run, scene, robot, targets, frames.append if record_video else None,
                                       show_progress=False)
        return Shard(envs, final_state(run, robot, controller, targets, scene.t), frames, timings)
    finally:
        scene.close()


def merge(shards: list[Shard]) -> tuple[RunResult, list[FrameState]]:
    """The shards' results as one run's, environments in order."""
    shards = sorted(shards, key=lambda s: int(s.envs[0]))
    rs = [s.result for s in shards]
    cat = lambda name: np.concatenate([getattr(r, name) for r in rs])  # noqa: E731
    telemetry = {k: (rs[0].telemetry[k] if k == "t" else np.concatenate([r.telemetry[k] for r in rs], axis=1))
                 for k in rs[0].telemetry}
    invariants = {k: np.concatenate([r.invariants[k] for r in rs]) for k in rs[0].invariants}
    result = RunResult(cat("q_final"), cat("ee_pos"), cat("ee_quat"), cat("targets_pos"), cat("targets_quat"),
                       telemetry, invariants)
    frames = [FrameState(parts[0].t, *(np.concatenate([getattr(p, f) for p in parts])
                                       for f in ("q", "targets_pos", "targets_quat", "status")))
              for parts in zip(*(s.frames for s in shards))]
    return result, frames


def _actor_class(ray):
    @ray.remote(num_cpus=1)
    class ShardActor:
        """A worker process with one PyBullet client; one compute thread (the shards are the parallelism)."""

        def __init__(self):
            os.environ["APP_THREADS"] = "1"

        def run(self, run: RunConfig, envs: np.ndarray, record_video: bool) -> Shard:
            return run_shard(run, envs, record_video)

    return ShardActor


def execute_sharded(run: RunConfig, out_dir: Path, workers: int, address: str | None = None,
                    video: bool = True) -> RunResult:
    """:func:`app.runner.execute` with the environments split over ``workers`` Ray actors."""
    t_start = time.perf_counter()
    n_envs = run.n_envs or 1
    groups = shares(n_envs, workers)
    outputs = OutputSet(out_dir)
    ray = start_ray(workers, address)
    actors, job = [], None
    try:
        t0 = time.perf_counter()
        actor_cls = _actor_class(ray)
        actors = [actor_cls.remote() for _ in groups]
        record = video and run.video.enabled
        pending = [a.run.remote(run, envs, record) for a, envs in zip(actors, groups)]
        timings = {"ray_start": t0 - t_start}
        shards = _gather(ray, pending)
        timings["workers"] = time.perf_counter() - t0
        timings["simulation_max"] = max(sum(s.timings.values()) for s in shards)
        result, frames = merge(shards)
        scene, robot = build_scene(run, envs=np.array([0]))  # the model, and the start pose for the camera
        scene.close()
        if record:
            job = video_job(run, outputs)
            targets = TargetGenerator(run.task, n_envs, np.array(run.scene_config.robot.base_pos), run.seed)
            job.start(video_look(run, robot, targets, grid_origins(n_envs, run.env_spacing)))
            for frame in frames:
                job.add(frame)
        return finish(run, result, robot.model, outputs, job, timings, t_start)
    except BaseException:
        if job is not None:
            job.abort()
        outputs.discard()
        raise
    finally:
        for actor in actors:
            ray.kill(actor)


def _gather(ray, pending: list) -> list[Shard]:
    """Every shard's result, with progress as they finish."""
    progress = Progress("workers", len(pending), unit="shard")
    done, results = 0, {}
    remaining = list(pending)
    try:
        while remaining:
            ready, remaining = ray.wait(remaining, num_returns=1)
            for ref in ready:
                results[ref] = ray.get(ref)
                done += 1
            progress.update(done)
    finally:
        progress.close()
    return [results[ref] for ref in pending]
