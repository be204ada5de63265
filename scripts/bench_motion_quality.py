"""What the motion-quality report (app.quality) costs a run: the time spent sampling (MotionTrace.record, timed as it
runs; Robot.command's copy of the motor targets, a microsecond a tick, is not counted) and judging
(MotionTrace.reports: app.quality's analyse) against the whole run's wall time, for app.run's configs without video
(in this process, one sitting), medians of --repeats. The issue's bar: at most 5 % of a run's wall time.

    python scripts/bench_motion_quality.py [--repeats 3] [--configs configs/pick_place.yaml ...]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from app.quality import trace as trace_module

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench_motion_quality")
CONFIGS = ("configs/batched_ik.yaml", "configs/pick_place.yaml", "configs/handover.yaml")


class Timed:
    """MotionTrace with its record and reports timed (seconds summed in ``spent``)."""

    spent = 0.0

    @classmethod
    def install(cls) -> None:
        for name in ("record", "reports"):
            original = getattr(trace_module.MotionTrace, name)

            def timed(self, *args, _original=original, **kwargs):
                t0 = time.perf_counter()
                try:
                    return _original(self, *args, **kwargs)
                finally:
                    cls.spent += time.perf_counter() - t0

            setattr(trace_module.MotionTrace, name, timed)


def one_run(config: str, out: Path) -> tuple[float, float]:
    """(wall [s], of it in the motion report [s]) of ``python -m app.run CONFIG --no-video`` in this process."""
    from app.run import main

    Timed.spent = 0.0
    t0 = time.perf_counter()
    code = main([str(ROOT / config), "--no-video", "--out", str(out)])
    wall = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"{config}: app.run exited {code}")
    return wall, Timed.spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    log.setLevel(logging.INFO)
    Timed.install()
    rows = {c: [] for c in args.configs}
    with tempfile.TemporaryDirectory() as tmp:
        one_run(args.configs[0], Path(tmp) / "warm")  # compiled kernels loaded, imports done
        for i in range(args.repeats):
            for config in args.configs:
                rows[config].append(one_run(config, Path(tmp) / f"{i}-{Path(config).stem}"))
    for config, runs in rows.items():
        wall = statistics.median(w for w, _ in runs)
        spent = statistics.median(s for _, s in runs)
        log.info("%s: run %.2f s, motion report %.3f s = %.2f %% (medians of %d)", config, wall, spent,
                 100 * spent / wall, len(runs))


if __name__ == "__main__":
    main()
