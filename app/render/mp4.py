"""Atomic mp4 writing (H.264, yuv420p), with progress on stderr.

Frames go to a temporary file next to the target whose name ends in .mp4; only a complete
video is renamed into place, so an interrupted or failed run leaves no corrupt file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from app.errors import InputError
from app.render.progress import Progress
from app.runtime.h264 import encode_h264
from app.runtime.outputs import output_path, write_atomic


def write_mp4(path: str | Path, frames: Iterable[np.ndarray], fps: int, total: int | None = None,
              label: str = "encoding") -> Path:
    """Encode RGB frames (height, width, 3) uint8 into ``path`` atomically, with progress (``label``) when
    ``total`` frames are announced. Returns the final path.

    Raises:
        InputError: no frames, or an odd width/height (H.264 with yuv420p needs even sizes).
    """
    progress = Progress(label, total, unit="frame") if total else None

    def checked(frames: Iterable[np.ndarray]) -> Iterable[np.ndarray]:
        first = None
        for frame in frames:
            first = frame.shape if first is None else first
            if frame.shape != first or frame.ndim != 3 or frame.shape[2] != 3:
                raise InputError(f"video frames must all be (height, width, 3) like the first {first}, "
                                 f"got {frame.shape}")
            if frame.shape[0] % 2 or frame.shape[1] % 2:
                raise InputError(f"video frames must have even width and height, got {frame.shape[1]}x"
                                 f"{frame.shape[0]}")
            yield frame

    def encode(tmp: str) -> None:
        sent = encode_h264(tmp, checked(frames), fps, ("-preset", "veryfast"),
                           on_frame=progress.update if progress else None, name=output_path(path))
        if sent == 0:
            raise InputError("no frames to write")

    try:
        return write_atomic(path, ".mp4", encode)
    finally:
        if progress:
            progress.close()
