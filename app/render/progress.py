"""Progress on stderr: a live bar with rate and ETA on a terminal (tqdm), a few plain lines otherwise
(0, 25, 50, 75 and 100 %, with elapsed time and ETA), so logs of CI runs stay readable."""

from __future__ import annotations

import sys
import threading
import time

BURST_S = 0.05  # [s] units finishing this soon after the first finished with it
BURST_FRACTION = 0.01  # ... or within this fraction of the time the first took


class Progress:
    """Progress of ``total`` units of work labelled ``label``; :meth:`update` with the count done so far.

    The ETA (both on a terminal and in plain lines) comes from the pace since the first unit finished, once a
    tenth is done: the first unit carries the start-up (numba's first compile, a render pool), which would
    otherwise stretch or shrink every estimate after it. Units finishing together with the first (a block of
    work: within ``BURST_FRACTION`` of the start-up, or ``BURST_S``) count as the first, so that they are not
    read as a pace of no time per unit.

    Args:
        stream: Where to write (stderr). position: Line of the bar on a terminal (0 top), for two at once.
        clock: Seconds, monotonic (time.perf_counter).
    """

    def __init__(self, label: str, total: int, unit: str = "it", stream=None, position: int = 0,
                 clock=time.perf_counter):
        self.label, self.total, self.stream = label, max(int(total), 1), stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._clock = clock
        self._last, self._t0, self._done, self._first, self._origin = -1, clock(), 0, None, None
        self._lock = threading.Lock()
        self._bar = None
        if self.tty:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=label, unit=unit, file=self.stream, position=position,
                             leave=True, dynamic_ncols=True, mininterval=0.2,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")

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
        now = self._clock()
        if self._first is None and done > 0:
            self._first = self._origin = (now, done)
        elif done > 0 and now - self._origin[0] <= max(BURST_S, BURST_FRACTION * (self._origin[0] - self._t0)):
            self._first = (now, done)  # finished with the first (a block of units): part of the start-up
        eta = self._eta(now, done)
        if self._bar is not None:
            self._bar.set_postfix_str(eta, refresh=False)
            self._bar.update(done - self._done)
        elif int(4 * done / self.total) > self._last:
            self._last = int(4 * done / self.total)
            self.stream.write(f"{self.label}: {done}/{self.total} ({now - self._t0:.1f} s{', ' + eta if eta else ''})\n")
            self.stream.flush()
        self._done = done

    def _eta(self, now: float, done: int) -> str:
        """'ETA x s' from the pace since the first unit, once a tenth is done; '' before (or when finished)."""
        if self._first is None or not self.total // 10 <= done < self.total or done <= self._first[1]:
            return ""
        t_first, n_first = self._first
        return f"ETA {(now - t_first) * (self.total - done) / (done - n_first):.1f} s"

    def eta(self) -> str:
        """'ETA x s' now (see the class docstring); '' before a tenth is done or once all is."""
        with self._lock:
            return self._eta(self._clock(), self._done)

    def elapsed(self) -> float:
        """Seconds since this progress began."""
        return self._clock() - self._t0

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
