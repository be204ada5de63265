"""Open any recorded dataset this app reads: a LeRobot folder (v3.0 or v2.1) or ACT HDF5 (a file or a folder)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.dataset.act_hdf5 import ACT_DEFAULT_FPS, read_act
from app.dataset.lerobot_reader import read_lerobot
from app.dataset.records import RecordedDataset
from app.dataset.units import UnitsGuess, detect_units
from app.dataset.video_segments import read_frames
from app.errors import DatasetError


def load_dataset(path: str | Path, act_fps: float = ACT_DEFAULT_FPS) -> RecordedDataset:
    """The dataset at ``path``: a folder with ``meta/info.json`` (LeRobot), a ``.hdf5``/``.h5`` file or a folder
    of them (ACT; ``act_fps`` [Hz] where a file does not say its rate).

    Raises:
        DatasetError: nothing there, or neither layout.
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError("no such file or folder", str(path))
    if (path / "meta" / "info.json").is_file():
        return read_lerobot(path)
    if path.suffix in (".hdf5", ".h5") or (path.is_dir() and any(path.glob("*.hdf5"))):
        return read_act(path, act_fps)
    raise DatasetError("neither a LeRobot dataset (meta/info.json) nor ACT HDF5 episodes (*.hdf5)", str(path))


def dataset_units(dataset: RecordedDataset) -> UnitsGuess:
    """The unit convention of a dataset's states and actions, from their ranges over every episode."""
    values = [np.vstack([e.state, e.action]) for e in dataset.episodes]
    return detect_units(np.vstack(values) if values else np.zeros((0, len(dataset.state_names))))


def episode_frames(dataset: RecordedDataset, episode: int, camera: str) -> np.ndarray:
    """Camera ``camera``'s frames of episode ``episode``, decoded; shape (n, h, w, 3) uint8."""
    if camera not in dataset.cameras:
        raise DatasetError(f"no camera {camera!r}; the dataset has {list(dataset.cameras)}")
    record = dataset.episodes[episode]
    if camera in record.images:
        return record.images[camera]
    span = record.videos[camera]
    first = int(round(span.from_s * dataset.fps))
    return read_frames(Path(span.path), first, int(round(span.to_s * dataset.fps)) - first)
