"""Videos rendered from recorded states, off the simulation's critical path.

The control loop records one :class:`FrameState` per video frame (joint positions, targets, status:
a few kB) and goes on; render processes, each with a headless copy of the run's scene, pose the arms,
render with TinyRenderer and draw the overlay, while a thread here feeds the finished frames, in order,
to the encoder (ffmpeg, a process of its own). Rendering is the largest cost of a run (~40 ms a
640x480 frame), so on a 2-core machine it now overlaps the simulation instead of following it.
``workers=0`` renders the same states with the same code in this process: the serial reference, and
the video is the same frame for frame (tests/test_video_job.py).
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import numpy as np

from app.config.schema import RunConfig
from app.control.status import STATUS_STYLE, EnvStatus
from app.episode.frame_render import RendererRecipe, Replica, SceneRenderer, VideoSpec, optical_view
from app.episode.frame_state import FrameState
from app.episode.replica import headless
from app.episode.run_report import target_labels
from app.kernels.dispatch import available_cpus, run_in_background
from app.render.framing import CameraView, box_corners, fit_view
from app.render.mp4 import write_mp4
from app.render.overlay import OverlayStyle
from app.runtime.render_server import render_context
from app.runtime.signals import signals_held
from app.sim.cameras import SceneCameras
from app.specs import CameraStream

log = logging.getLogger(__name__)
CHUNK = 4  # frames per render task
MAX_AUTO_WORKERS = 4
CAPTION_RESERVE = 0.1  # top fraction of the picture kept for the caption and legend


def legend() -> tuple:
    return tuple(STATUS_STYLE[code] for code in EnvStatus)


_renderer: SceneRenderer | None = None  # one per render process


def _worker_init(recipe: RendererRecipe) -> None:
    global _renderer
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends the pool
    run_in_background()  # already, where the fork server (app.episode.render_preload) started it
    _renderer = recipe.build()


def _worker_render(spec: VideoSpec, states: list[FrameState]) -> list[np.ndarray]:
    return [_renderer.render(spec, s) for s in states]


def auto_workers() -> int:
    return min(available_cpus(), MAX_AUTO_WORKERS)


_RENDERED = object()  # in VideoJob's queue of chunks: a render finished


class VideoAborted(Exception):
    """The job was aborted (write_mp4 removes its partial file)."""


class VideoJob:
    """Renders states as they are added and encodes them, in order, into ``path`` (atomically). One thread
    starts the render processes (a ProcessPoolExecutor, which build their scenes at once, while the caller
    builds its own), hands them the frames in chunks as they come, and encodes the rendered chunks in order;
    :meth:`start` gives the look of the frames before the first :meth:`add`.

    Args:
        run: The run (None with ``replica``). path: The mp4 (a temporary name ending in .mp4). fps: Frames per
            second. total: Frames expected (for progress). workers: Render processes; 0 renders here, on the
            caller's thread. replica: A picklable callable giving the scene the frames pose (a
            app.episode.frame_render.Replica); None: the run's.
    """

    def __init__(self, run: RunConfig | None, path: Path, fps: int, total: int, workers: int,
                 replica: Callable[[], Replica] | None = None):
        self.spec: VideoSpec | None = None
        self.frames = 0
        self._batch: list[FrameState] = []
        self._chunks: queue.Queue = queue.Queue()  # lists of FrameStates (or, with workers=0, of frames); None ends
        self._aborted = threading.Event()
        self._error: BaseException | None = None
        recipe = RendererRecipe(None if run is None else headless(run), replica)
        self._renderer = None if workers else recipe.build()
        context = render_context() if workers else None  # the fork server, from this (main) thread
        self._thread = threading.Thread(target=self._encode, args=(recipe, context, workers, path, fps, total),
                                        daemon=True, name="video-encoder")
        try:
            with signals_held():  # started, or not at all: a signal waits until start() has returned
                self._thread.start()
        except BaseException:  # a Ctrl-C as the thread starts: the caller never gets this job to abort, so it
            self.abort()  # ends here (the thread starts no render process once aborted)
            raise

    def start(self, spec: VideoSpec) -> None:
        """How the frames look (camera, overlay), known once the caller's scene is built."""
        self.spec = spec

    def add(self, state: FrameState) -> None:
        """Queue one frame (copies nothing: pass arrays that are not modified later). Raises what stopped the
        render processes or the encoder (e.g. a pool that could not start)."""
        if self._error is not None:
            raise self._error
        self._batch.append(state)
        self.frames += 1
        if len(self._batch) >= CHUNK:
            self._hand_on()

    def _hand_on(self) -> None:
        batch, self._batch = self._batch, []
        if batch:
            self._chunks.put([self._renderer.render(self.spec, s) for s in batch] if self._renderer else batch)

    def _encode(self, recipe: RendererRecipe, context, workers: int, path: Path, fps: int, total: int) -> None:
        pool = None
        run_in_background()  # this thread, the pool's threads and the encoder process leave the simulation its core
        try:
            if workers and not self._aborted.is_set():
                pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init,
                                           initargs=(recipe,))
                for _ in range(workers):  # each submit while none is idle starts a process: all build now
                    pool.submit(int)
            write_mp4(path, self._rendered(pool), fps, total, label="video")
        except BaseException as exc:  # handed to add() and finish()
            self._error = self._error or exc
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def _rendered(self, pool: ProcessPoolExecutor | None):
        """The frames in order: each chunk sent to the pool as it comes, yielded as soon as it and those before it
        are rendered. A finished render wakes this loop (``_RENDERED`` in the queue) as a new chunk does: waiting
        for new chunks only, the encoder got no frame until the run's last one (the simulation outruns the
        renders), and encoded all 100 of the main job's after the simulation and the report."""
        pending: deque = deque()
        ended = False
        while not ended or pending:
            if not ended:
                chunk = self._chunks.get()
                ended = chunk is None
                if chunk is not None and chunk is not _RENDERED:
                    pending.append(pool.submit(_worker_render, self.spec, chunk) if pool else chunk)
                    if pool:
                        pending[-1].add_done_callback(lambda _: self._chunks.put(_RENDERED))
            while pending and (ended or not isinstance(pending[0], Future) or pending[0].done()):
                if self._aborted.is_set():
                    raise VideoAborted("video aborted")
                head = pending.popleft()
                yield from head.result() if isinstance(head, Future) else head
            if self._aborted.is_set():
                raise VideoAborted("video aborted")

    def finish(self) -> None:
        """Wait until every frame is rendered and encoded; raises what a render process or the encoder raised."""
        self._hand_on()
        self._chunks.put(None)
        self._thread.join()
        self._close()
        if self._error is not None:
            raise self._error

    def abort(self) -> None:
        """Stop now (interrupted or failed run): render processes stopped, the partial file removed."""
        self._aborted.set()
        self._chunks.put(None)
        if self._thread.is_alive():  # not when start() failed
            self._thread.join(timeout=10)
        self._close()

    def _close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def video_spec(run: RunConfig, view: CameraView, env_origins: np.ndarray, anchors: np.ndarray) -> VideoSpec:
    """The look of a run's video: its name as the title, overlay sizes to suit the picture; filmed from a named
    camera on a link (``video.camera``), the view follows that link in environment ``follow_env``."""
    labels, stream = target_labels(run), named_stream(run)
    style = OverlayStyle.for_view(view, legend(), run.video.axis_length, labels)
    return VideoSpec(run.name, view, style, env_origins, anchors, stream, run.video.follow_env or 0)


def named_stream(run: RunConfig) -> CameraStream | None:
    """The link camera ``video.camera`` names, as a CameraStream; None for the scene camera or a fixed one."""
    named = [c for c in run.scene_config.cameras if c.name == run.video.camera and c.link is not None]
    return named[0] if named else None


def fit_points(run: RunConfig, robot, targets, envs: np.ndarray, env_origins: np.ndarray) -> np.ndarray:
    """World points (n, 3) the picture must hold for environments ``envs``: table and obstacle corners, the
    arm's links at the start and the targets over the run (sampled)."""
    cfg = run.scene_config
    local = [box_corners(b.pos, b.size) for b in (cfg.table, *cfg.obstacles) if b is not None]
    local.append(np.asarray(cfg.robot.base_pos, dtype=float)[None])
    links, _ = robot.forward_kinematics(robot.unbatch(robot.initial_qpos))
    links = np.asarray(links).reshape(robot.n_envs, -1, 3)[0]  # every environment starts alike
    times = np.linspace(0.0, run.duration, 24)
    sampled = np.concatenate([targets(t).pos for t in times], axis=1)  # (n_envs, 24 T, 3)
    per_env = [np.concatenate(local + [links, sampled[e]]) + env_origins[e] for e in envs]
    return np.concatenate(per_env)


def video_view(run: RunConfig, robot, targets, env_origins: np.ndarray) -> CameraView:
    """The run's camera: the scene camera's line of sight, framed on every environment (or ``follow_env``)."""
    cam, v = run.scene_config.camera, run.video
    width, height = v.width or cam.width, v.height or cam.height
    if v.camera is not None:  # a named camera, placed in its environment (on a link: where it starts)
        named = next(c for c in run.scene_config.cameras if c.name == v.camera)
        origin = env_origins[v.follow_env or 0]
        if named.link is not None:
            stream = named_stream(run)
            q0 = np.asarray(robot.initial_qpos, dtype=float).reshape(robot.n_envs, -1)[v.follow_env or 0]
            p, R = SceneCameras(None, robot, [stream]).poses(q0)[stream.name]
            return optical_view(origin + p, R, named.fov, width, height)
        return CameraView(origin + np.asarray(named.eye), origin + np.asarray(named.target), named.fov, width, height,
                          tuple(named.up))
    if v.framing == "scene":
        return CameraView(np.array(cam.eye, dtype=float), np.array(cam.target, dtype=float), cam.fov, width, height)
    envs = np.arange(len(env_origins)) if v.follow_env is None else np.array([v.follow_env])
    points = fit_points(run, robot, targets, envs, env_origins)
    return fit_view(points, np.array(cam.eye), np.array(cam.target), cam.fov, width, height,
                    top_reserve=CAPTION_RESERVE)
