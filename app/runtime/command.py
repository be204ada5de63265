"""What the command lines (app.run, app.record, app.replay, app.track, app.sweep, app.solve) share: one ``main``
(arguments, logging, a user error as one line and exit 2), signals end them in one line and no Ray process or
early render server outlives them."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Callable

from app.errors import AppError


class Terminated(BaseException):
    """SIGTERM, raised where the run is (not an Exception: nothing swallows it on the way out)."""


class Interrupted(KeyboardInterrupt):
    """SIGINT, as the command lines raise it: a KeyboardInterrupt, but not of the exact type CPython watches. One
    raised inside exec or eval of a string (the generated methods of a namedtuple or dataclass, while a module
    imports) sets CPython's "unhandled KeyboardInterrupt" flag even when run_cli then handles it, and the process
    killed itself with SIGINT at exit: -2 instead of 130, in 2 of 10 Ctrl-Cs in the first second."""


def _interrupt(signum, frame) -> None:
    raise Interrupted()


def _terminate(signum, frame) -> None:
    raise Terminated()


def _stopped_while_importing(signum, frame) -> None:
    """SIGINT/SIGTERM before ``run_cli`` took over (the package still importing numba, PyBullet, ...)."""
    word, code = ("interrupted (SIGINT)", 130) if signum == signal.SIGINT else ("terminated (SIGTERM)", 143)
    print(f"{word}: stopped while starting; no output was written or replaced", file=sys.stderr)
    _stop_helpers()
    raise SystemExit(code)


def _stop_helpers() -> None:
    """No helper process outlives the command: Ray's (app.runtime.ray_session) and the render server started early
    (app.runtime.render_server.start_early)."""
    if "ray" in sys.modules:
        from app.runtime.ray_session import shutdown_ray

        shutdown_ray()
    if "app.runtime.render_server" in sys.modules:
        from app.runtime.render_server import stop_early

        stop_early()


def catch_signals_while_importing() -> None:
    """Until ``run_cli`` runs, SIGINT and SIGTERM end a command line with one line (130 / 143) instead of a
    KeyboardInterrupt traceback from inside an import. A signal the shell set to be ignored stays ignored."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
            signal.signal(signum, _stopped_while_importing)


def one_line(exc: BaseException) -> str:
    """An error's text on one line (a message that quotes a library's several lines joins them with "; "), so
    that the whole error is the last line of stderr."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def command_main(parse: Callable[[list[str] | None], argparse.Namespace], body: Callable[[argparse.Namespace], int],
                 argv: list[str] | None = None,
                 stopped: str | Callable[[], str] = "no output was written or replaced") -> int:
    """What every command line's ``main`` does: parse ``argv`` (argparse's own errors exit 2), log at INFO (DEBUG
    where the command has a true ``--verbose``), then ``body(args)`` under :func:`run_cli`; an AppError raised by
    the body ends the command with ``error: ...`` as its last line on stderr and exit code 2."""
    args = parse(argv)
    verbose = vars(args).get("verbose", False)
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(message)s")

    def guarded() -> int:
        try:
            return body(args)
        except AppError as exc:
            print(f"error: {one_line(exc)}", file=sys.stderr)
            return 2

    return run_cli(guarded, stopped)


def run_cli(body, stopped: str | Callable[[], str] = "no output was written or replaced") -> int:
    """``body()``'s exit code, with SIGINT and SIGTERM ending it in one line (130 / 143): ``stopped`` (or what it
    returns when called then) says what the command left; no Ray process left behind."""
    previous_int = signal.getsignal(signal.SIGINT)  # from here on a KeyboardInterrupt (Interrupted), unless ignored
    if previous_int in (_stopped_while_importing, signal.default_int_handler):
        signal.signal(signal.SIGINT, _interrupt)
    previous = signal.signal(signal.SIGTERM, _terminate)
    if previous is _stopped_while_importing:
        previous = signal.SIG_DFL
    try:
        try:
            return body()
        finally:
            _stop_helpers()
    except (KeyboardInterrupt, Terminated, SystemError, SystemExit) as exc:
        signal_exc = signal_behind(exc)
        if signal_exc is None:
            raise
        word, code = ("interrupted (SIGINT)", 130) if isinstance(signal_exc, KeyboardInterrupt) else \
            ("terminated (SIGTERM)", 143)
        print(f"{word}: stopped; {stopped() if callable(stopped) else stopped}", file=sys.stderr)
        return code
    finally:
        signal.signal(signal.SIGTERM, previous)
        if signal.getsignal(signal.SIGINT) is _interrupt:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def signal_behind(exc: BaseException | None) -> BaseException | None:
    """The KeyboardInterrupt or Terminated behind ``exc``: a signal that lands while a compiled kernel is called
    surfaces as numba's SystemError ("returned a result with an exception set") caused by it. Code that reports
    a user's exceptions (a policy's, a sweep point's) re-raises this one instead: the user stopped the command."""
    while exc is not None:
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            return exc
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:  # Ray's SIGTERM handler, while ray.init runs
            return Terminated()
        exc = exc.__cause__ or exc.__context__
    return None
