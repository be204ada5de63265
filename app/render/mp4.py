"""Atomic mp4 writing (H.264, yuv420p), with progress on stderr.

Frames go to a temporary file next to the target whose name ends in .mp4; only a complete
video is renamed into place, so an interrupted or failed run leaves no corrupt file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from app.errors import InputError
from app.render.progress import Progress
from app.runtime.outputs import write_atomic


def write_mp4(path: str | Path, frames: Iterable[np.ndarray], fps: int, total: int | None = None,
              label: str = "encoding") -> Path:
    """Encode RGB frames (height, width, 3) uint8 into ``path`` atomically, with progress (``label``) when
    ``total`` frames are announced. Returns the final path.

    Raises:
        InputError: no frames, or an odd width/height (H.264 with yuv420p needs even sizes).
    """
    progress = Progress(label, total, unit="frame") if total else None

    def encode(tmp: str) -> None:
        writer = None
        try:
            for count, frame in enumerate(frames, 1):
                if writer is None:
                    h, w = frame.shape[:2]
                    if h % 2 or w % 2:
                        raise InputError(f"video frames must have even width and height, got {w}x{h}")
                    writer = imageio.get_writer(tmp, fps=fps, codec="libx264", pixelformat="yuv420p",
                                                macro_block_size=1, ffmpeg_log_level="error",
                                                output_params=["-preset", "veryfast"])
                writer.append_data(frame)
                if progress:
                    progress.update(count)
            if writer is None:
                raise InputError("no frames to write")
        finally:
            if writer is not None:
                writer.close()

    try:
        return write_atomic(path, ".mp4", encode)
    finally:
        if progress:
            progress.close()
