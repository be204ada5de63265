"""Command line: ``python -m app.run CONFIG [--gui] [--no-video] [--out DIR] [--duration S] [--seed N]``.

User errors (bad config, missing file, an output folder that cannot be written, no display for
--gui) exit with code 2 and one line on stderr, before any output file is written. SIGINT and
SIGTERM stop the run with one line, no traceback and no partial file (exit 130 / 143); the
outputs of an earlier run in the folder stay as they were.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from app.config.loader import load_run_config
from app.errors import AppError
from app.threads import n_threads

log = logging.getLogger("app.run")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m app.run",
        description="Run a YAML-configured PyBullet scene with our IK/QP controller; write an mp4, a JSON "
                    "report and a tracking-error plot.")
    parser.add_argument("config", help="run config, e.g. configs/batched_ik.yaml (it names its scene file)")
    parser.add_argument("--gui", action="store_true",
                        help="open PyBullet's window in real time: sliders move env 0's target; keys: "
                             "space pause/resume, n single step while paused, r reset (needs a display)")
    parser.add_argument("--no-video", action="store_true", help="skip rendering and the mp4 (much faster)")
    parser.add_argument("--out", default=None, help="output folder (default: videos/<config name>)")
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds (overrides the config)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (overrides the config)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser.parse_args(argv)


class Terminated(BaseException):
    """SIGTERM, raised where the run is (not an Exception: nothing swallows it on the way out)."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _main(args)
    except (KeyboardInterrupt, Terminated, SystemError) as exc:
        signal_exc = _signal_of(exc)
        if signal_exc is None:
            raise
        if isinstance(signal_exc, KeyboardInterrupt):
            print("interrupted (SIGINT): stopped; no output was written or replaced", file=sys.stderr)
            return 130
        print("terminated (SIGTERM): stopped; no output was written or replaced", file=sys.stderr)
        return 143
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_of(exc: BaseException | None) -> BaseException | None:
    """The KeyboardInterrupt or Terminated behind ``exc``: a signal that lands while a compiled kernel is called
    surfaces as numba's SystemError ("returned a result with an exception set") caused by it."""
    while exc is not None:
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _main(args: argparse.Namespace) -> int:
    try:
        n_threads()  # APP_THREADS checked before any work
        run = load_run_config(args.config, duration=args.duration, seed=args.seed)
        out_dir = Path(args.out) if args.out else Path(run.out_dir) / run.name
        if args.gui:
            from app.gui import run_gui

            run_gui(run)
            return 0
        from app.runner import execute

        result = execute(run, out_dir, video=not args.no_video)
    except AppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for kind, path in result.outputs.items():
        log.info("%s: %s", kind, path)
    log.info("timings [s]: %s", ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
