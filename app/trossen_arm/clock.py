"""The simulated clock of app.trossen_arm: how simulated time follows the script's wall-clock time.

Simulated time only advances inside driver calls (the physics steps there), but it is tied to the wall clock
so a script's non-blocking goals go on while it computes: at each call the world is stepped up to
``anchor_sim + scale * (now - anchor_wall)``. A blocking goal steps to its end at once and then waits (wall
clock) until that much time has passed at ``scale``. The scale comes from ``APP_TROSSEN_TIME_SCALE``:

- ``1`` (the default): real time;
- ``N > 0``: N simulated seconds per wall-clock second (blocking goals wait 1/N of their goal time);
- ``0``: simulated time does not follow the wall clock at all: it advances only by blocking goals (and
  app.trossen_arm.world.advance), which never wait: the fastest and fully reproducible, for tests.

Where the physics cannot keep up with the scale, the lag beyond 50 ms is dropped (simulated time then runs
slower than asked, never unboundedly behind).
"""

from __future__ import annotations

import os
import time

from app.errors import InputError

SCALE_ENV = "APP_TROSSEN_TIME_SCALE"
MAX_SCALE = 100.0  # simulated seconds per wall-clock second: the simulator keeps up with ~10-50x on 2 cores


def scale_from_env(environ=os.environ) -> float:
    """The time scale ``APP_TROSSEN_TIME_SCALE`` names (default 1.0); raises InputError on a bad value."""
    text = environ.get(SCALE_ENV, "1")
    try:
        scale = float(text)
    except ValueError:
        scale = -1.0
    if not 0.0 <= scale <= MAX_SCALE:  # 1e12 asked the simulation to catch up with 1e12 s a second: it never did
        raise InputError(f"{SCALE_ENV} must be a number from 0 to {MAX_SCALE:g} (1: real time, 0: simulated time "
                         f"only), got {text!r}")
    return scale


class SimClock:
    """Maps wall-clock time to the simulated time the world should have reached.

    Args:
        scale: Simulated seconds per wall-clock second (0: not tied to the wall clock).
        wall: The wall-clock source [s] (monotonic; injectable for tests).
    """

    def __init__(self, scale: float, wall=time.monotonic, sleep=time.sleep):
        self.scale, self._wall, self._sleep = float(scale), wall, sleep
        self._anchor_wall, self._anchor_sim = wall(), 0.0

    def target(self) -> float:
        """The simulated time [s] the world should be at now."""
        if self.scale == 0.0:
            return self._anchor_sim
        return self._anchor_sim + self.scale * (self._wall() - self._anchor_wall)

    def wait_until(self, t_sim: float) -> None:
        """After a blocking goal stepped the world to ``t_sim`` [s]: wait until the wall clock catches up (at
        scale 0, or when it already has, at once), then anchor there."""
        if self.scale > 0.0:
            remaining = (t_sim - self.target()) / self.scale
            if remaining > 0:
                self._sleep(remaining)
        self.anchor(t_sim)

    def drop_lag(self, t_sim: float, max_lag: float = 0.05) -> None:
        """After stepping to ``t_sim`` [s]: where the world is more than ``max_lag`` [s] behind ``target()`` (the
        physics slower than the scale asks), forget the lag, so each call steps a bounded time."""
        if self.target() - t_sim > max_lag:
            self.anchor(t_sim)

    def anchor(self, t_sim: float) -> None:
        """From now on, ``target()`` counts from ``t_sim`` [s] at this wall-clock instant."""
        self._anchor_wall, self._anchor_sim = self._wall(), float(t_sim)
