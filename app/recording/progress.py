"""A recording's progress as its episodes become ready (app.recording.blocks' ``on_episode``): app.run's progress
(app.render.progress.Progress: its bar on a terminal, and its ETA) counting episodes, and one line per episode as
it is ready, with its outcome, the pace in dataset frames per second (rows, each with every camera's picture)
since the recording began, and the ETA from the pace since the first episode. Off a terminal those lines are the
progress (Progress' own quarter lines would repeat them)."""

from __future__ import annotations

import io
import logging
import sys
import threading

from app.render.progress import Progress

log = logging.getLogger("app.record")


class RecordProgress:
    """Episodes ready out of ``total``; :meth:`episode_done` may be called from any thread."""

    def __init__(self, total: int, stream=None, clock=None):
        kwargs = {} if clock is None else {"clock": clock}
        stream = stream or sys.stderr
        tty = hasattr(stream, "isatty") and stream.isatty()
        self.total = int(total)
        self.bar = Progress("episodes", self.total, unit="episode", stream=stream if tty else io.StringIO(), **kwargs)
        self.done, self.frames = 0, 0
        self._lock = threading.Lock()

    def episode_done(self, env: int, outcome: tuple[bool, str], n_frames: int) -> None:
        """Episode ``env`` is ready: (success, reason) and its ``n_frames`` dataset rows."""
        with self._lock:
            self.done += 1
            self.frames += int(n_frames)
            done, frames = self.done, self.frames
        self.bar.add(1)
        elapsed = max(self.bar.elapsed(), 1e-9)
        ok, reason = outcome
        eta = self.bar.eta()
        log.info("episode %d ready (%d/%d): %s; %d frames, %.1f frames/s%s", env, done, self.total,
                 "success" if ok else f"failed: {reason}", n_frames, frames / elapsed, f", {eta}" if eta else "")

    def close(self) -> None:
        self.bar.close()
