"""RGB frames piped into ffmpeg (imageio-ffmpeg's binary) as H.264, with ffmpeg's outcome checked.

imageio's writer returns normally when ffmpeg fails at the end (a full disk while it writes the trailer leaves a
truncated file and prints ffmpeg's own lines): here ffmpeg's stderr is captured, its exit status checked, and a
failure is one AppError line naming the output file and ffmpeg's last message.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path

import imageio_ffmpeg
import numpy as np

from app.errors import AppError

CRF = 25  # imageio's default quality 5 for libx264, which the videos were encoded with before


def encode_h264(path: str | Path, frames: Iterable[np.ndarray], fps: float, params: tuple[str, ...] = (),
                on_frame: Callable[[int], None] | None = None, name: str | Path | None = None) -> int:
    """Encode RGB ``frames`` (each (h, w, 3) uint8, one size, h and w even) to ``path`` (yuv420p at ``fps``; extra
    ffmpeg output ``params``), calling ``on_frame(count)`` after each. Returns the number of frames sent.

    Raises:
        AppError: ffmpeg failed (the file at ``path`` is then incomplete): "cannot write NAME: ffmpeg: ..."
            with ``name`` (default ``path``) the output the user knows.
    """
    errors, count, started = deque(maxlen=20), 0, []  # started: the ffmpeg process, once there is one
    try:
        for frame in frames:
            if not started:
                reader = _start(path, frame.shape[1], frame.shape[0], fps, params, errors, started)
            try:
                started[0].stdin.write(np.ascontiguousarray(frame, dtype=np.uint8).tobytes())
            except BrokenPipeError:  # ffmpeg stopped: its status and message follow
                break
            count += 1
            if on_frame is not None:
                on_frame(count)
        if started:
            _finish(started[0], reader, errors, name or path)
    except BaseException:  # ffmpeg ended before we return, so it cannot write the file after the caller removed it
        if started and started[0].poll() is None:  # (a Ctrl-C inside _start, after ffmpeg started, included)
            started[0].kill()
            started[0].wait()
        raise
    return count


def _start(path, width: int, height: int, fps: float, params: tuple[str, ...], errors: deque,
           started: list) -> threading.Thread:
    """ffmpeg reading frames on stdin, put in ``started`` as it returns (no signal check between the two); the
    thread draining its stderr into ``errors``."""
    fmt = () if "-f" in params else ("-f", "mp4")
    cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-hide_banner", "-v", "error", "-f", "rawvideo",
           "-vcodec", "rawvideo", "-s", f"{width}x{height}", "-pix_fmt", "rgb24",
           "-r", str(Fraction(fps).limit_denominator()), "-i", "-", "-vcodec", "libx264", "-pix_fmt", "yuv420p",
           "-crf", str(CRF), *params, *fmt, "fd:"]
    # ffmpeg writes to the file we opened (its stdout, a seekable fd: ffmpeg's fd: protocol), never to a path: an
    # ffmpeg whose Popen a Ctrl-C cut off (its pid lost) then writes into whatever the caller removed, and no file
    # appears after the caller cleaned up. Its own process group: a terminal's Ctrl-C reaches us, not it.
    with open(path, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.PIPE, start_new_session=True)
        started.append(proc)
    reader = threading.Thread(target=_drain, args=(proc.stderr, errors), daemon=True)
    reader.start()
    return reader


def _drain(stream, errors: deque) -> None:
    """ffmpeg's stderr, read as it comes (a full pipe would stall ffmpeg), keeping the last lines."""
    for line in iter(stream.readline, b""):
        text = line.decode(errors="replace").strip()
        if text:
            errors.append(text)
    stream.close()


def _finish(proc: subprocess.Popen, reader: threading.Thread, errors: deque, name: str | Path) -> None:
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    code = proc.wait()
    reader.join()
    if code < 0:  # a signal: SIGXFSZ where a file size limit (ulimit -f) stopped it
        raise AppError(f"cannot write {name}: ffmpeg was stopped by {signal.Signals(-code).name}"
                       f"{' (the file size limit, ulimit -f)' if -code == signal.SIGXFSZ else ''}")
    if code != 0 or any("Error" in line for line in errors):
        if any("No space left" in line for line in errors):
            cause = "No space left on device"
        else:
            cause = " ".join(errors[-1].split())[-200:] if errors else f"exit status {code}"
        raise AppError(f"cannot write {name}: ffmpeg: {cause}")
