"""Scale-out on Ray: a run's environments sharded over worker processes (or machines), same answers.

The environments are cut into blocks as the run goes, each for the worker that asks (this process, which starts
on the first while Ray starts, ~2.5-4 s, or one of the ``workers - 1`` Ray actors), sized so that all finish
together (app.episode.guided_blocks). Each block runs in a PyBullet client (DIRECT) of its own, its environments built where they stand
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
import socket
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.config.schema import RunConfig
from app.episode.execute import abandon, finish, video_job, video_look
from app.episode.frame_state import FrameState
from app.episode.guided_blocks import GuidedBlocks
from app.episode.loop import RunResult, final_state, simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.errors import AppError
from app.render.progress import Progress
from app.runtime.outputs import OutputSet
from app.runtime.ray_session import check_reachable, ray_released
from app.runtime.work_pool import STOP, run_everywhere, works_here
from app.sim.scene import grid_origins

log = logging.getLogger(__name__)
def shares(n_envs: int, workers: int) -> list[np.ndarray]:
    """Environment indices per worker: contiguous, sizes differing by at most one."""
    if not 1 <= workers <= n_envs:
        raise AppError(f"workers must be 1..n_envs={n_envs} (each worker needs an environment), got {workers}")
    return [a for a in np.array_split(np.arange(n_envs), workers)]


class Shard(NamedTuple):
    """What one worker returns: its environments (k,), their end state and telemetry, its video states, the
    wall-clock span of its simulation (start, end) [s since the epoch] and which process ran it."""

    envs: np.ndarray
    result: RunResult
    frames: list[FrameState]
    timings: dict
    span: tuple[float, float]
    worker: str


def run_shard(run: RunConfig, envs: np.ndarray, record_video: bool, show_progress: bool = False) -> Shard:
    """One worker's share of ``run``: the environments ``envs`` simulated in their own PyBullet client
    (``show_progress``: the simulation's steps shown as app.run shows them)."""
    t0 = time.perf_counter()
    scene, robot = build_scene(run, envs=envs)
    build_s = time.perf_counter() - t0
    try:
        targets = run_motion(run, envs=envs, robot=robot)
        frames: list[FrameState] = []
        start = time.time()
        episode, timings = simulate(run, scene, robot, targets, frames.append if record_video else None,
                                    on_tick=lambda k, controller, q: STOP.is_set(), show_progress=show_progress)
        timings["build"] = build_s
        end = final_state(run, robot, episode, targets, scene.t, scene=scene, envs=envs)
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
                       plans=[p for r in rs for p in r.plans], motion=[m for r in rs for m in r.motion],
                       objects={name: {k: np.concatenate([r.objects[name][k] for r in rs]) for k in o}
                                for name, o in rs[0].objects.items()})
    cat_or_none = lambda parts, f: None if getattr(parts[0], f) is None else np.concatenate(  # noqa: E731
        [getattr(p, f) for p in parts])
    frames = [FrameState(parts[0].t, *(cat_or_none(parts, f) for f in FrameState._fields[1:]))
              for parts in zip(*(s.frames for s in shards))]
    return result, frames


def _shard_of(args: tuple) -> Shard:
    run, envs, record = args
    return run_shard(run, envs, record)


def execute_sharded(run: RunConfig, out_dir: Path, workers: int, address: str | None = None,
                    video: bool = True) -> RunResult:
    """:func:`app.episode.execute.execute` with the environments in blocks run by ``workers`` Ray actors and this process."""
    t_start = time.perf_counter()
    n_envs = run.n_envs or 1
    shares(n_envs, workers)  # checks the count
    works_here()  # and APP_SCALE_LOCAL, before any output
    check_reachable(address)  # a cluster named but unreachable: refused before any scene is built
    outputs = OutputSet(out_dir)
    record = video and run.video.enabled
    groups = GuidedBlocks(n_envs, workers, lambda envs: (run, envs, record))
    progress = Progress("environments", n_envs, unit="env")
    job = None
    try:
        try:
            shards, timings = run_everywhere(groups, _shard_of, workers, address,
                                             lambda i: progress.add(len(groups.envs[i])))
        finally:
            progress.close()
        steady_s, steady_envs = steady_phase(shards, timings["actors"] + (1 if timings["items_here"] else 0))
        scale = {"workers": workers, "actors": timings["actors"], "blocks": [len(g) for g in groups.envs],
                 "blocks_here": timings["items_here"], "blocks_per_node": timings["nodes"],
                 "all_working_s": round(steady_s, 4), "all_working_env_episodes": round(steady_envs, 3)}
        timings = {"ray_start": timings["ray_start"], "blocks": timings["wall"]}
        with ray_released():
            result, frames = merge(shards)
            scene, robot = build_scene(run, envs=np.array([0]))  # the model, and the start pose for the camera
            scene.close()
            if record:
                job = video_job(run, outputs)
                job.start(video_look(run, robot, run_motion(run, robot=robot), grid_origins(n_envs, run.env_spacing)))
                for frame in frames:
                    job.add(frame)
            result.scale = scale
            return finish(run, result, robot.model, outputs, job, timings, t_start)
    except BaseException:
        abandon(outputs, job)
        raise
