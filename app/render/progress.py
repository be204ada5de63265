"""Progress on stderr: a live bar with rate and ETA on a terminal (tqdm), a few plain lines otherwise
(0, 25, 50, 75 and 100 %, with elapsed time and ETA), so logs of CI runs stay readable."""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    """Progress of ``total`` units of work labelled ``label``; :meth:`update` with the count done so far.

    Args:
        stream: Where to write (stderr). position: Line of the bar on a terminal (0 top), for two at once.
    """

    def __init__(self, label: str, total: int, unit: str = "it", stream=None, position: int = 0):
        self.label, self.total, self.stream = label, max(int(total), 1), stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last, self._t0, self._done = -1, time.perf_counter(), 0
        self._lock = threading.Lock()
        self._bar = None
        if self.tty:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=label, unit=unit, file=self.stream, position=position,
                             leave=True, dynamic_ncols=True, mininterval=0.2)

    def update(self, done: int) -> None:
        """Record that ``done`` units (cumulative) are finished."""
        with self._lock:
            self._set(done)

    def add(self, units: int) -> None:
        """Record that ``units`` more are finished (work that finishes out of order, on several threads)."""
        with self._lock:
            self._set(self._done + units)

    def _set(self, done: int) -> None:
        """(Under the lock.)"""
        done = min(int(done), self.total)
        if self._bar is not None:
            self._bar.update(done - self._done)
        elif int(4 * done / self.total) > self._last:
            self._last = int(4 * done / self.total)
            elapsed = time.perf_counter() - self._t0
            eta = f", ETA {elapsed * (self.total - done) / done:.1f} s" if self.total // 10 <= done < self.total \
                and done else ""  # an ETA from the first percent (a compile, a start-up) would mislead
            self.stream.write(f"{self.label}: {done}/{self.total} ({elapsed:.1f} s{eta})\n")
            self.stream.flush()
        self._done = done

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
