"""Camera videos of a dataset: one H.264 (yuv420p) file per camera holding every episode in order.

An episode's frames are encoded to a segment, then the camera's file is rebuilt as the old file followed by
the segment with ffmpeg's concat demuxer (stream copy, no re-encoding) and renamed into place.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import imageio.v2 as imageio
import imageio_ffmpeg
import numpy as np

from app.errors import DatasetError
from app.runtime.h264 import encode_h264
from app.runtime.outputs import PARTIAL, output_path, write_atomic

CODEC = "h264"
PIX_FMT = "yuv420p"


def _concat(parts: list[Path], out: str) -> None:
    """Stream-copy ``parts`` (same codec and size) one after another into ``out``."""
    with tempfile.NamedTemporaryFile("w", prefix=f"{PARTIAL}concat.", suffix=".txt", dir=Path(out).parent,
                                     delete=False) as listing:
        listing.write("".join(f"file '{p.resolve()}'\n" for p in parts))
    try:
        _ffmpeg(["-y", "-loglevel", "error", "-f", "concat", "-safe", "0", "-i", listing.name, "-c", "copy",
                 "-movflags", "+faststart", out], Path(out))
    finally:
        os.unlink(listing.name)


def _encode(path: str, frames: np.ndarray, fps: int) -> None:
    """``frames`` (n, h, w, 3) uint8 as H.264 yuv420p at ``path``: no B-frames, so every frame's time is
    exactly its index / fps and segments join without shifting."""
    h, w = frames.shape[1:3]
    if h % 2 or w % 2:
        raise DatasetError(f"camera frames must have even width and height (H.264 yuv420p), got {w}x{h}")
    encode_h264(path, frames, fps, ("-preset", "veryfast", "-bf", "0"), name=output_path(path))


def encode_segment(folder: Path, frames: np.ndarray, fps: int) -> Path:
    """RGB ``frames`` (n, h, w, 3) uint8 encoded as one episode's segment (a new file in ``folder``), as
    :func:`append_frames` encodes them: what a worker process hands to the writer instead of the frames."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, segment = tempfile.mkstemp(suffix=".mp4", prefix=f"{PARTIAL}segment.", dir=folder)
    os.close(fd)
    try:
        _encode(segment, frames, fps)
    except BaseException:
        os.unlink(segment)
        raise
    return Path(segment)


def append_segment(path: Path, segment: Path) -> int:
    """Append an encoded ``segment`` (same codec and size) to the video at ``path`` (created if absent), atomically;
    the segment file is consumed. Returns the number of frames it holds (counted in the file, not assumed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        added = count_frames(segment)
        if path.exists():
            write_atomic(path, ".mp4", lambda tmp: _concat([path, segment], tmp))
        else:
            os.replace(segment, path)
    finally:
        if os.path.exists(segment):
            os.unlink(segment)
    return added


def append_frames(path: Path, frames: np.ndarray, fps: int) -> int:
    """Append RGB ``frames`` (n, h, w, 3) uint8 to the video at ``path`` (created if absent), atomically.
    Returns the number of frames the encoded segment holds (counted in the file, not assumed)."""
    return append_segment(path, encode_segment(path.parent, frames, fps))


def _ffmpeg(args: list[str], path: Path) -> str:
    """Run ffmpeg with ``args``; its stderr (where it reports). Raises DatasetError naming ``path`` on failure."""
    done = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", *args], capture_output=True, text=True)
    if done.returncode:
        raise DatasetError(f"ffmpeg failed: {done.stderr.strip()[-300:]}", str(path))
    return done.stderr


def count_frames(path: Path) -> int:
    """Number of video frames (packets) in the file at ``path``, read without decoding."""
    report = _ffmpeg(["-i", str(path), "-map", "0:v:0", "-c", "copy", "-f", "null", "-"], path)
    counts = re.findall(r"frame=\s*(\d+)", report)
    if not counts:
        raise DatasetError("ffmpeg reported no frame count", str(path))
    return int(counts[-1])


def frame_times(path: Path) -> np.ndarray:
    """Presentation time [s] of every frame of the video at ``path``, in order. Shape (n_frames,)."""
    report = _ffmpeg(["-i", str(path), "-map", "0:v:0", "-vf", "showinfo", "-f", "null", "-"], path)
    return np.array([float(t) for t in re.findall(r"pts_time:\s*([0-9.eE+-]+)", report)])


def truncate(path: Path, n_frames: int) -> None:
    """Keep the first ``n_frames`` of the video at ``path`` (stream copy, atomically); remove it at 0."""
    if not path.exists():
        return
    if n_frames == 0:
        path.unlink()
    elif count_frames(path) > n_frames:
        write_atomic(path, ".mp4", lambda tmp: _ffmpeg(["-y", "-loglevel", "error", "-i", str(path), "-map", "0:v:0",
                                                        "-c", "copy", "-frames:v", str(n_frames), tmp], path))


def read_frames(path: Path, first: int, count: int) -> np.ndarray:
    """Frames ``first .. first + count - 1`` of the video at ``path``; shape (count, h, w, 3) uint8."""
    frames = []
    with imageio.get_reader(str(path), "ffmpeg") as reader:
        for i, frame in enumerate(reader):
            if i >= first + count:
                break
            if i >= first:
                frames.append(frame)
    if len(frames) != count:
        raise DatasetError(f"video holds {first + len(frames)} frames, frames {first}..{first + count - 1} "
                           "were asked for", str(path))
    return np.stack(frames)
