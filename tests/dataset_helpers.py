"""Synthetic episodes for the dataset tests: states that count frames, grey frames that encode (episode, frame)."""

from __future__ import annotations

import numpy as np
import pytest

import app.dataset.lerobot_writer as lerobot_writer
from app.dataset import CameraSpec, DatasetSpec, EpisodeFrames, trossen_names

CAM = "observation.images.cam_high"
SPEC = DatasetSpec(fps=30, robot_type="trossen_ai_solo", state_names=tuple(trossen_names(1)),
                   action_names=tuple(trossen_names(1)), cameras=(CameraSpec(CAM, 48, 64),))


def grey(episode: int, n: int) -> np.ndarray:
    """Frames (n, 48, 64, 3) uint8, frame k a flat grey of 40 * episode + 8 * k (mod 256): each frame is known."""
    levels = (40 * episode + 8 * np.arange(n)) % 256
    return np.broadcast_to(levels[:, None, None, None], (n, 48, 64, 3)).astype(np.uint8)


def episode(index: int, n: int, task: str = "pick") -> EpisodeFrames:
    """State k = k in every value (as the lerobot fixture has), action = state + 0.5."""
    state = np.tile(np.arange(n, dtype=np.float64)[:, None], 7)
    return EpisodeFrames(task, state, state + 0.5, {CAM: grey(index, n)})


def append_dying_before_info(writer, frames: EpisodeFrames, monkeypatch) -> None:
    """``writer.append(frames)`` interrupted (KeyboardInterrupt) as it is about to write info.json: after the
    episode's data, video and metadata files, before the dataset counts it."""
    real = lerobot_writer.write_json

    def dies_on_info(path, data):
        if path.name == "info.json":
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(lerobot_writer, "write_json", dies_on_info)
    with pytest.raises(KeyboardInterrupt):
        writer.append(frames)
    monkeypatch.setattr(lerobot_writer, "write_json", real)
