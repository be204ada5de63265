"""Command line: ``python -m app.record CONFIG --episodes N --out DIR [--format lerobot|act-hdf5]
[--trossen-units] [--keep-failed] [--seed S]``.

Records N episodes of a run config as a dataset: the run's N environments are the episodes (each drawn from
the seed like any run's environments: object poses, place targets, motion parameters), simulated together
in this process. Every video frame (the config's ``video.fps``) the measured joints become one row in the
Trossen layout (7 values per arm: six joints, the gripper's finger position; SI units, or Trossen's degrees
and metres x 10000 with ``--trossen-units``): ``observation.state`` the joints at that frame, ``action`` the
joints one frame later (where the controller drove them; the last frame repeats). An episode that failed (a
pick that did not place, a target not reached) is left out and listed, or kept with ``--keep-failed``, its
task text then saying ``[failed: reason]``. Episodes are written one at a time, each atomically: an
interrupted recording leaves a dataset with the finished ones. No camera streams yet: the datasets hold
states and actions only.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

from app.build import build_scene
from app.cli import run_cli
from app.config.loader import load_run_config
from app.config.schema import RunConfig
from app.control.status import reached
from app.dataset import ROBOT_TYPES, DatasetSpec, EpisodeFrames, LeRobotWriter, convert, write_act_episode
from app.dataset.robot_map import robot_layout, values_from_dofs
from app.errors import AppError
from app.runner import final_state, run_targets, simulate

log = logging.getLogger("app.record")


def _outcomes(run: RunConfig, result) -> list[tuple[bool, str]]:
    """Per environment: (success, reason): a pick's own judgement, else whether the final target was reached."""
    if result.episodes:
        return [(bool(e["success"]), e.get("reason", "")) for e in result.episodes]
    tel = result.telemetry
    return [(bool(reached(tel["pos_err"][-1, e], tel["rot_err"][-1, e])), "target not reached")
            for e in range(len(result.q_final))]


def record_episodes(run: RunConfig) -> tuple[list[str], list[EpisodeFrames], list[tuple[bool, str]]]:
    """Simulate ``run`` and cut its environments into episodes (SI units, one row per video frame).

    Returns:
        (joint names, episodes in environment order, per episode (success, reason)).
    """
    scene, robot = build_scene(run)
    frames = []
    try:
        names, dof_map = robot_layout(list(robot.model.dof_names))
        targets = run_targets(run, robot.n_envs, robot=robot)
        controller, _ = simulate(run, scene, robot, targets, frames.append, show_progress=False)
        result = final_state(run, robot, controller, targets, scene.t, scene=scene)
    finally:
        scene.close()
    q = np.stack([f.q for f in frames], axis=1)  # (n_envs, n_frames, n_dofs)
    episodes = []
    for e in range(len(q)):
        state = values_from_dofs(q[e], dof_map, len(names))
        action = np.vstack([state[1:], state[-1:]])
        episodes.append(EpisodeFrames(run.task.type, state, action, {}))
    return names, episodes, _outcomes(run, result)


def _write(args: argparse.Namespace, run: RunConfig, names: list[str], episodes: list[EpisodeFrames]) -> None:
    units = "trossen" if args.trossen_units else "si"
    episodes = [e._replace(state=convert(e.state, "si", units), action=convert(e.action, "si", units))
                for e in episodes]
    out = Path(args.out)
    if args.format == "act-hdf5":
        for k, e in enumerate(episodes):
            qvel = np.gradient(e.state, axis=0) * run.video.fps
            write_act_episode(out / f"episode_{k}.hdf5", e.state, qvel, e.action, {}, run.video.fps, names)
        return
    spec = DatasetSpec(run.video.fps, ROBOT_TYPES[len(names) // 7], tuple(names), tuple(names))
    writer = LeRobotWriter(out, spec)
    for e in episodes:
        writer.append(e)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.record", description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("config", help="run config, e.g. configs/pick_place.yaml")
    parser.add_argument("--episodes", type=int, required=True, help="number of episodes (the run's environments)")
    parser.add_argument("--out", required=True, help="dataset folder")
    parser.add_argument("--format", choices=("lerobot", "act-hdf5"), default="lerobot")
    parser.add_argument("--trossen-units", action="store_true", help="degrees and gripper metres x 10000")
    parser.add_argument("--keep-failed", action="store_true", help="keep failed episodes, flagged in their task")
    parser.add_argument("--seed", type=int, default=None, help="random seed (overrides the config)")
    parser.add_argument("--duration", type=float, default=None, help="episode length [s] (overrides the config)")
    return parser.parse_args(argv)


def _main(args: argparse.Namespace) -> int:
    try:
        if args.episodes < 1:
            raise AppError(f"--episodes must be >= 1, got {args.episodes}")
        run = load_run_config(args.config, n_envs=args.episodes, seed=args.seed, duration=args.duration, workers=1)
        names, episodes, outcomes = record_episodes(run)
        failed = [k for k, (ok, _) in enumerate(outcomes) if not ok]
        for k in failed:
            log.warning("episode %d failed: %s%s", k, outcomes[k][1], " (kept, flagged)" if args.keep_failed
                        else " (left out)")
        if args.keep_failed:
            episodes = [e._replace(task=f"{e.task} [failed: {outcomes[k][1]}]") if k in failed else e
                        for k, e in enumerate(episodes)]
        else:
            episodes = [e for k, e in enumerate(episodes) if k not in failed]
        _write(args, run, names, episodes)
    except AppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    log.info("%d episodes written to %s (%d failed%s)", len(episodes), args.out, len(failed),
             ", kept" if args.keep_failed else ", left out" if failed else "")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    return run_cli(lambda: _main(args))


if __name__ == "__main__":
    sys.exit(main())
