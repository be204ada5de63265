"""Command line: ``python -m app.run CONFIG [--gui] [--no-video] [--check] [--out DIR] [--duration S] [--seed N]``.

Ends with a summary of how the run went; ``--check`` exits 3 when an environment missed its target.
User errors (bad config, missing file, an output folder that cannot be written, no display for
--gui) exit with code 2 and one line on stderr, before any output file is written. SIGINT and
SIGTERM stop the run with one line, no traceback and no partial file (exit 130 / 143); the
outputs of an earlier run in the folder stay as they were.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.episode.gui_keys import HELP
from app.errors import AppError
from app.kernels.dispatch import n_threads
from app.runtime.command import command_main

log = logging.getLogger("app.run")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m app.run",
        description="Run a YAML-configured PyBullet scene with our IK/QP controller; write an mp4, a JSON "
                    "report and a tracking-error plot.")
    parser.add_argument("config", help="run config, e.g. configs/batched_ik.yaml (it names its scene file)")
    parser.add_argument("--gui", action="store_true",
                        help="open PyBullet's window in real time (needs a display): sliders move the selected "
                             "environment's target; keys: " + "; ".join(HELP) + "; it stays open after the duration")
    parser.add_argument("--check", action="store_true",
                        help="exit with code 3 when any environment missed its target at the end (for CI)")
    parser.add_argument("--no-video", action="store_true", help="skip rendering and the mp4 (much faster)")
    parser.add_argument("--out", default=None, help="output folder (default: videos/<config name>)")
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds (overrides the config)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (overrides the config)")
    parser.add_argument("--n-envs", type=int, default=None, help="number of environments (overrides the config)")
    parser.add_argument("--workers", type=int, default=None,
                        help="split the environments over N Ray worker processes (overrides the config's "
                             "'workers'; needs the 'scale' extra; same results for any N)")
    parser.add_argument("--ray-address", default=None,
                        help="join this Ray cluster (default: $RAY_ADDRESS, else a local one with N CPUs)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return command_main(parse_args, _main, argv)


def _main(args: argparse.Namespace) -> int:
    n_threads()  # APP_THREADS checked before any work
    run = load_run_config(args.config, duration=args.duration, seed=args.seed, n_envs=args.n_envs,
                          workers=args.workers)
    if args.out is not None and not args.out.strip():
        raise AppError(f"--out: must name a folder, got {args.out!r} (leave --out out for videos/<config name>)")
    out_dir = Path(args.out) if args.out is not None else Path(run.out_dir) / run.name
    if args.gui and run.workers > 1:
        raise AppError("--gui runs in this process: use it without --workers (or workers: 1)")
    if args.gui:
        from app.episode.gui import run_gui

        summary = run_gui(run, out_dir).result.summary
    else:
        if run.workers > 1:
            from app.episode.sharding import execute_sharded

            result = execute_sharded(run, out_dir, run.workers, args.ray_address, video=not args.no_video)
        else:
            if not args.no_video and run.video.enabled and run.video.workers != 0:
                from app.runtime.render_server import render_context

                render_context()  # started already by `python -m app.run` (app/__init__.py), else now
            from app.episode.execute import execute

            result = execute(run, out_dir, video=not args.no_video)
        for kind, path in result.outputs.items():
            log.info("%s: %s", kind, path)
        log.info("timings [s]: %s", ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items()))
        if result.scale:
            s = result.scale
            log.info("%d workers; %d blocks of %s environments, %d run here%s", s["workers"], len(s["blocks"]),
                     "/".join(map(str, s["blocks"])), s["blocks_here"],
                     f"; all working for {s['all_working_s']:.2f} s, in which "
                     f"{s['all_working_env_episodes']:.1f} environments' episodes were simulated"
                     if s["all_working_s"] else "; the run ended before every worker had a block")
        summary = result.summary
    for line in summary_lines(summary):
        log.info("%s", line)
    goal = summary.get("placed", min(summary["reached"], summary.get("planned", summary["n_envs"])))  # a pick: placed
    return 3 if args.check and goal < summary["n_envs"] else 0


def summary_lines(s: dict) -> list[str]:
    """The end-of-run summary as the console prints it."""
    def mm(x):
        return "n/a" if x is None else f"{x * 1e3:.2f} mm"

    missed = f" (missed: {', '.join(map(str, s['missed_envs'][:12]))}{' ...' if len(s['missed_envs']) > 12 else ''})"
    obstacle = ("no obstacle watched" if s["min_obstacle_distance_m"] is None else
                f"closest obstacle {mm(s['min_obstacle_distance_m'])}"
                + (f" (d_safe {mm(s['d_safe_m'])})" if s["d_safe_m"] is not None else ""))
    pick = [] if "placed" not in s else [
        f"placed {s['placed']}/{s['n_envs']}" + ("; failed: " + ", ".join(f"{reason} {envs}" for reason, envs in
                                                                       s["failed"].items()) if s["failed"] else "")
        + f"; largest slip of a held object {mm(s['slip_max_m'])}"]
    if "planned" in s:
        pick.append(f"planned {s['planned']}/{s['n_envs']}" + ("; failed: " + ", ".join(
            f"{reason} {envs}" for reason, envs in s["plan_failed"].items()) if s["plan_failed"] else "")
            + f"; planning median {s['planning_median_s'] or 0.0:.3f} s per move")
    stopped = [f"stopped early: {s['simulated_s']:.2f} s simulated of the run's {s['duration_s']:g} s; what follows is "
               "the state then"] if s.get("stopped_early") else []
    return stopped + pick + [f"{_reached(s)}{missed if s['missed_envs'] else ''}{_why_missed(s)}; worst final error "
            f"{mm(s['pos_err_final_max_m'])}, {np.degrees(s['rot_err_final_max_rad'] or 0.0):.2f} deg",
            f"stalled at the end {s['stalled_final']} (ever {s['stalled_ever']}); solver failed at the end "
            f"{s['solver_failed_final']} (failed on {s.get('solver_failed_ticks', 0)} environment-ticks, "
            f"{100 * s['solver_failed_ticks_fraction']:.3g} % of them); {obstacle}; "
            + _limit_margin(s["joint_limit_margin_min_rad"])] + ([s["motion"]] if "motion" in s else [])


def _reached(s: dict) -> str:
    """What "reached" counts: the arm at its last target; for a pick, that is the retreat after placing or failing,
    so it is said beside the task's own outcome (placed) and never read as a success of the task."""
    what = "final target reached" if "placed" not in s else "arm back at its final (retreat) pose"
    return f"{what} {s['reached']}/{s['n_envs']}"


def _why_missed(s: dict) -> str:
    """Why the environments that missed their final target did: stalled, the solver failing, or still on the way
    when the run ended (a target the arm was still moving to is neither stalled nor failed)."""
    missed = s["n_envs"] - s["reached"]
    if missed <= 0:
        return ""
    moving = max(0, missed - s["stalled_final"] - s["solver_failed_final"])
    parts = [f"{s['stalled_final']} stalled", f"{s['solver_failed_final']} with the solver failing"] + (
        [f"{moving} still on the way when the run ended"] if moving else [])
    return " (of those: " + ", ".join(parts) + ")"


def _limit_margin(margin: float) -> str:
    """The smallest joint-limit margin [rad], or, below zero, the excess it is (never '-0.0000 rad')."""
    if margin < 0:
        return f"a joint went {-margin:.2e} rad (or m) past its limit"
    return f"smallest joint-limit margin {margin:.4f} rad"


if __name__ == "__main__":
    sys.exit(main())
