"""Atomic mp4 writing (H.264, yuv420p) with a progress bar on stderr.

Frames go to a temporary file next to the target whose name ends in .mp4; only a complete
video is renamed into place, so an interrupted or failed run leaves no corrupt file.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from app.errors import InputError
from app.render.outputs import PARTIAL


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal, a few lines otherwise)."""

    def __init__(self, label: str, total: int, stream=None):
        self.label, self.total, self.stream = label, max(total, 1), stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = -1

    def update(self, done: int) -> None:
        frac = min(done / self.total, 1.0)
        if self.tty:
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {done}/{self.total}")
            if done >= self.total:
                self.stream.write("\n")
        elif int(4 * frac) > self._last:  # 0 %, 25 %, 50 %, 75 %, 100 %
            self._last = int(4 * frac)
            self.stream.write(f"{self.label}: {done}/{self.total}\n")
        self.stream.flush()


def write_mp4(path: str | Path, frames: Iterable[np.ndarray], fps: int, total: int | None = None) -> Path:
    """Encode RGB frames (height, width, 3) uint8 into ``path`` atomically. Returns the final path.

    Raises:
        InputError: no frames, or an odd width/height (H.264 with yuv420p needs even sizes).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".mp4", prefix=f"{PARTIAL}{path.stem}.", dir=path.parent)
    os.close(fd)
    progress = Progress("encoding", total or 0) if total else None
    writer = None
    try:
        count = 0
        for frame in frames:
            if writer is None:
                h, w = frame.shape[:2]
                if h % 2 or w % 2:
                    raise InputError(f"video frames must have even width and height, got {w}x{h}")
                writer = imageio.get_writer(tmp, fps=fps, codec="libx264", pixelformat="yuv420p",
                                            macro_block_size=1, ffmpeg_log_level="error")
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
        if writer is not None:
            writer.close()
        if os.path.exists(tmp):
            os.unlink(tmp)
