"""What the command lines (app.run, app.sweep, app.solve) share: signals end them in one line and no Ray process
outlives them."""

from __future__ import annotations

import signal
import sys


class Terminated(BaseException):
    """SIGTERM, raised where the run is (not an Exception: nothing swallows it on the way out)."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def run_cli(body, stopped: str = "no output was written or replaced") -> int:
    """``body()``'s exit code, with SIGINT and SIGTERM ending it in one line (130 / 143) and no Ray process
    left behind."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        try:
            return body()
        finally:
            if "ray" in sys.modules:  # no Ray process outlives the command
                from app.ray_session import shutdown_ray

                shutdown_ray()
    except (KeyboardInterrupt, Terminated, SystemError, SystemExit) as exc:
        signal_exc = _signal_of(exc)
        if signal_exc is None:
            raise
        word, code = ("interrupted (SIGINT)", 130) if isinstance(signal_exc, KeyboardInterrupt) else \
            ("terminated (SIGTERM)", 143)
        print(f"{word}: stopped; {stopped}", file=sys.stderr)
        return code
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_of(exc: BaseException | None) -> BaseException | None:
    """The KeyboardInterrupt or Terminated behind ``exc``: a signal that lands while a compiled kernel is called
    surfaces as numba's SystemError ("returned a result with an exception set") caused by it."""
    while exc is not None:
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            return exc
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:  # Ray's SIGTERM handler, while ray.init runs
            return Terminated()
        exc = exc.__cause__ or exc.__context__
    return None
