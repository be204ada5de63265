"""What goes into a dataset and what comes out of one (plain typed records, no I/O)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class CameraSpec(NamedTuple):
    """One camera stream of a dataset. ``key`` is the feature name (``observation.images.cam_high``)."""
    key: str
    height: int
    width: int


class DatasetSpec(NamedTuple):
    """The fixed description of a dataset being written.

    Attributes:
        fps: Frame rate [Hz] of every row and video frame.
        robot_type: e.g. ``trossen_ai_solo``.
        state_names: Names of ``observation.state``'s values (7 per arm for the Trossen kits).
        action_names: Names of ``action``'s values.
        cameras: The video streams, in feature order.
        environment_names: Names of ``observation.environment_state``'s values (the objects' poses); () writes
            no such feature.
    """
    fps: int
    robot_type: str
    state_names: tuple[str, ...]
    action_names: tuple[str, ...]
    cameras: tuple[CameraSpec, ...] = ()
    environment_names: tuple[str, ...] = ()


class EncodedVideo(NamedTuple):
    """One episode's frames of a camera already encoded (app.dataset.video_segments.encode_segment, e.g. by a worker
    process): the segment file (consumed by the writer), its frame count and the frames' stats
    (app.dataset.stats.image_stats)."""
    path: str
    n_frames: int
    height: int
    width: int
    stats: dict


class EpisodeFrames(NamedTuple):
    """One finished episode to append.

    Attributes:
        task: The task's text (``tasks.parquet``'s index).
        state: ``observation.state`` per frame, shape (n_frames, len(state_names)).
        action: ``action`` per frame, shape (n_frames, len(action_names)).
        images: Camera key -> RGB frames, shape (n_frames, height, width, 3) uint8, or an EncodedVideo of them.
        environment_state: ``observation.environment_state`` per frame, shape (n_frames,
            len(environment_names)); None where the spec names none.
    """
    task: str
    state: np.ndarray
    action: np.ndarray
    images: dict[str, np.ndarray]
    environment_state: np.ndarray | None = None


class VideoSpan(NamedTuple):
    """Where an episode's frames lie in a video file: [from_s, to_s) of ``path``."""
    path: str
    from_s: float
    to_s: float


class RecordedEpisode(NamedTuple):
    """One episode as read back, values as stored (see ``RecordedDataset.units``).

    Attributes:
        index: The episode's index in the dataset.
        task: Its task's text ("" where the format has none).
        state: Shape (n_frames, n_state) float64.
        action: Shape (n_frames, n_action) float64.
        timestamp: Shape (n_frames,) [s] from the episode's start.
        videos: Camera key -> span in a video file (LeRobot); empty for ACT HDF5.
        images: Camera key -> frames (n_frames, h, w, 3) uint8 where the file holds them (ACT HDF5).
        environment_state: ``observation.environment_state`` rows (n_frames, n_env) where the dataset has
            them, else shape (0, 0).
    """
    index: int
    task: str
    state: np.ndarray
    action: np.ndarray
    timestamp: np.ndarray
    videos: dict[str, VideoSpan]
    images: dict[str, np.ndarray]
    environment_state: np.ndarray = np.zeros((0, 0))


class RecordedDataset(NamedTuple):
    """A dataset as read back.

    Attributes:
        format: "lerobot-v3.0", "lerobot-v2.1" or "act-hdf5".
        fps: Frame rate [Hz].
        robot_type: As recorded ("" where the format has none).
        state_names: Names of the state's values.
        action_names: Names of the action's values.
        cameras: Camera keys, in order.
        episodes: The episodes in index order.
        environment_names: Names of ``observation.environment_state``'s values (() where it has none).
    """
    format: str
    fps: float
    robot_type: str
    state_names: tuple[str, ...]
    action_names: tuple[str, ...]
    cameras: tuple[str, ...]
    episodes: tuple[RecordedEpisode, ...]
    environment_names: tuple[str, ...] = ()
