"""Command line: ``python -m app.track TRAJECTORY --config CONFIG [--out DIR] [--rate HZ] [--physics]
[--rot-mask X,Y,Z] [--format csv|npz|parquet] [--check]``.

Turns an end-effector trajectory (a policy's waypoints: CSV with a header, NPZ or parquet; ``t``, ``x y z``,
``qw qx qy qz``, optional ``gripper``; several arms as ``ARM.x`` ... with the scene's arm names) into joint
commands with the config's controller (``ik`` or ``qp``) at the control rate, and reports every stretch where an
arm fell behind with its cause: unreachable, policy_jump (with the factor), collision_margin, joint_limit,
singular or velocity_bound (unexplained when none applies; a stall is never silent). Positions are relative to
the robot's base position in the environment frame, as every task's points.

Without ``--physics`` the joints are ideal (app.control.robot_protocol.IntegratorRobot): each tick they reach the
controller's command, which keeps the velocity, acceleration and position bounds, so the joint trajectory is
exactly what the controller commands and a stall is the trajectory's or the controller's, not the motors'
(and 10,000 waypoints take seconds). A ``qp`` controller's collision rows come from PyBullet's closest points on
the scene posed at each tick (no physics steps). ``--physics`` runs the scene's PyBullet motors instead (control
every physics_hz / rate steps), to see what the simulated arm does with the same commands.

Writes ``joints.<format>`` (t and every DOF [rad, m] at each tick, the gripper column passed through) and
``track.json`` into ``--out`` atomically. Exit 2 with one line for a bad file or config; ``--check``: exit 3
when any stretch was found.
"""

from __future__ import annotations

import argparse
import logging
import sys

from app.runtime.command import command_main

log = logging.getLogger("app.track")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.track", description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("trajectory", help="end-effector trajectory (.csv, .npz, .parquet)")
    parser.add_argument("--config", required=True, help="run config: the scene, robot and controller")
    parser.add_argument("--out", default=None, help="output folder (default runs/track/<trajectory name>)")
    parser.add_argument("--rate", type=float, default=None,
                        help="control rate [Hz] (default: the controller's control_hz, else the physics rate)")
    parser.add_argument("--physics", action="store_true", help="PyBullet motors instead of ideal joints")
    parser.add_argument("--rot-mask", default="1,1,1", help="orientation axes tracked (default all: 1,1,1)")
    parser.add_argument("--format", choices=("csv", "npz", "parquet"), default=None,
                        help="joint trajectory format (default: the input's)")
    parser.add_argument("--singular-threshold", type=float, default=0.01,
                        help="smallest singular value of the task Jacobian counted as singular")
    parser.add_argument("--check", action="store_true", help="exit 3 when tracking fell behind anywhere")
    return parser.parse_args(argv)


def _main(args: argparse.Namespace) -> int:
    from app.episode.trajectory_run import run_track

    report = run_track(args)
    stretches = report["stretches"]
    for s in report["stretch_lines"]:
        log.warning("%s", s)
    timing = report["timings"]
    log.info("%d ticks at %g Hz (%s, %s): %d stretch(es) behind; %.2f s, %.1fx real time; %s",
             report["n_ticks"], report["rate_hz"], report["controller"], "physics" if args.physics else "ideal joints",
             len(stretches), timing["loop_s"], timing["x_real_time"], report["outputs"]["report"])
    log.info("%s", report["summary"]["motion"])
    return 3 if args.check and stretches else 0


def main(argv: list[str] | None = None) -> int:
    return command_main(parse_args, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
