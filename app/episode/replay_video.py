"""A replay's video, made as ``app.run`` makes its own (app.episode.video_job: the episode's scene posed from each
frame's state in render processes, TinyRenderer, the overlay, ffmpeg): one picture per dataset frame at the
dataset's rate, the target frame drawn where the recorded state put the end effector, its status dot green
while the replayed end effector is within REACHED_GAP of it, the place target marked where the episode had one."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.config.schema import RunConfig
from app.control.status import EnvStatus
from app.episode.execute import video_look
from app.episode.frame_state import FrameState
from app.episode.video_job import VideoJob, auto_workers
from app.sim.robot import Robot
from app.sim.scene import Scene

REACHED_GAP = 0.005  # [m] the replayed end effector this near the recorded one counts as following it


class _Targets(NamedTuple):
    pos: np.ndarray  # (1, 1, 3) [m]
    quat: np.ndarray  # (1, 1, 4) wxyz


class RecordedPath:
    """The recorded end effector as the video's target over time: positions ``ee`` (n, 3) [m] at ``fps``
    (the orientation drawn level: the overlay shows where, the joints' plot how)."""

    def __init__(self, ee: np.ndarray, fps: float):
        self.ee, self.fps = np.asarray(ee, dtype=float), float(fps)

    def at(self, k: int) -> _Targets:
        return _Targets(self.ee[min(max(k, 0), len(self.ee) - 1)][None, None], np.array([[[1.0, 0.0, 0.0, 0.0]]]))

    def __call__(self, t: float) -> _Targets:
        return self.at(int(round(t * self.fps)))


class ReplayVideo:
    """The mp4 of a replay at ``path``: :meth:`add` after each frame's physics, :meth:`finish` at the end (or
    :meth:`abort`). ``workers``: render processes (None: as app.run chooses; 0 renders on this thread)."""

    def __init__(self, run: RunConfig, path, fps: float, n_frames: int, workers: int | None = None):
        self.run, self.fps = run, int(round(fps))
        self.job = VideoJob(run, path, self.fps, n_frames, auto_workers() if workers is None else workers)
        self.path: RecordedPath | None = None
        self.mark: np.ndarray | None = None

    def start(self, robot: Robot, scene: Scene, ee_recorded: np.ndarray, title: str, place: np.ndarray | None,
              place_z: float) -> None:
        """The video's look once the scene is built: framed on the recorded path, ``title`` as the caption,
        the place target (2,) [m] (None: none) marked at height ``place_z`` [m]."""
        self.path = RecordedPath(ee_recorded, self.fps)
        spec = video_look(self.run, robot, self.path, scene.env_origins)
        self.job.start(spec._replace(title=title))
        self.mark = None if place is None else np.array([[[place[0], place[1], place_z]]])

    def add(self, k: int, t: float, q: np.ndarray, ee: np.ndarray, objects: np.ndarray) -> None:
        """Frame k at time t [s]: joints q (1, n_dofs), the replayed end effector ee (3,) [m], the objects
        (n_objects, 7)."""
        target = self.path.at(k)
        status = EnvStatus.REACHED if np.linalg.norm(ee - target.pos[0, 0]) <= REACHED_GAP else EnvStatus.TRACKING
        self.job.add(FrameState(t, np.array(q, dtype=float), target.pos, target.quat, np.array([int(status)]),
                                objects[None].copy() if len(objects) else None, None, self.mark))

    def finish(self) -> None:
        self.job.finish()

    def abort(self) -> None:
        self.job.abort()
