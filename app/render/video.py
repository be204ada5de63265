"""Atomic mp4 writing (H.264, yuv420p), with progress on stderr.

Frames go to a temporary file next to the target whose name ends in .mp4; only a complete
video is renamed into place, so an interrupted or failed run leaves no corrupt file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from app.errors import InputError
from app.render.outputs import PARTIAL
from app.render.progress import Progress


def write_mp4(path: str | Path, frames: Iterable[np.ndarray], fps: int, total: int | None = None,
              label: str = "encoding") -> Path:
    """Encode RGB frames (height, width, 3) uint8 into ``path`` atomically, with progress (``label``) when
    ``total`` frames are announced. Returns the final path.

    Raises:
        InputError: no frames, or an odd width/height (H.264 with yuv420p needs even sizes).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".mp4", prefix=f"{PARTIAL}{path.stem}.", dir=path.parent)
    os.close(fd)
    progress = Progress(label, total, unit="frame") if total else None
    writer = None
    try:
        count = 0
        for frame in frames:
            if writer is None:
                h, w = frame.shape[:2]
                if h % 2 or w % 2:
                    raise InputError(f"video frames must have even width and height, got {w}x{h}")
                writer = imageio.get_writer(tmp, fps=fps, codec="libx264", pixelformat="yuv420p",
                                            macro_block_size=1, ffmpeg_log_level="error",
                                            output_params=["-preset", "veryfast"])
            writer.append_data(frame)
            count += 1
            if progress:
                progress.update(count)
        if writer is None:
            raise InputError("no frames to write")
        writer.close()
        writer = None
        os.replace(tmp, path)
        os.chmod(path, 0o644)  # mkstemp made it private
        return path
    finally:
        if progress:
            progress.close()
        if writer is not None:
            writer.close()
        if os.path.exists(tmp):
            os.unlink(tmp)
