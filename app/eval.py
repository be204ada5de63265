"""Command line: ``python -m app.eval --list-tasks`` lists the object tasks; ``python -m app.eval CONFIG (--policy expert|random|module:factory | --replay DATASET |
--lerobot-policy PATH) --episodes N --out DIR [--seed S] [--num-envs B] [--workers W] [--ray-address A]
[--videos K] [--obs-type T] [--action-mode M] [--image-size H W] [--fps F]``.

Evaluates a policy over N seeded episodes of a run config's task in Gymnasium environments (app.envs): episode i
is seeded S + i (``lerobot-eval``'s convention), played in waves of B environments of one world, the waves on W
Ray workers or here. ``DIR/eval_info.json`` is LeRobot's (per episode and aggregated: ``pc_success``,
``avg_sum_reward``, ``avg_max_reward``, ``eval_s``, ``eval_ep_s``, ``video_paths``) with each episode's failure
reason and stall counts, the success rate's 95 % interval and the counts of reasons and stall causes;
``DIR/videos/eval_episode_N.mp4`` the first K episodes with our overlay. A policy that fails (raises, the wrong
shape, NaN) ends the command with one line naming it and the step; the episodes finished are kept in
eval_info.json (``complete: false``). ``--policy module:factory``: a function taking the vector environment and
returning an object with ``select_action(observation) -> actions`` (num_envs, action_dim). ``--replay``: a
dataset recorded by ``app.record`` (its episodes' scenes in ``meta/episode_scenes.jsonl``), episode i playing
dataset episode i. ``--lerobot-policy``: a LeRobot policy folder (``pretrained_model/`` as ``lerobot-train``
saves it, or the checkpoint or training folder above it), run through lerobot's own observation preprocessing
and the policy's saved processors (app.evaluation.lerobot_policy); it needs lerobot installed in this Python
(otherwise one line saying so, exit 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import time
import uuid
from pathlib import Path

from app.config.loader import load_run_config
from app.dataset import load_dataset
from app.envs.options import ACTION_MODES, OBS_TYPES, EnvOptions
from app.errors import AppError, InputError
from app.evaluation.report import eval_info, summary_line, write_eval_info
from app.evaluation.runner import PolicyError
from app.evaluation.shards import EvalJob, PolicySpec, close_here, run_job
from app.evaluation.smoothing import check_alpha
from app.evaluation.task_list import task_rows, task_table
from app.recording.episode_scenes import read_scenes
from app.runtime.command import command_main
from app.runtime.outputs import OutputSet

log = logging.getLogger("app.eval")
MAX_EPISODES = 100_000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    if argv is not None and "--list-tasks" in argv or argv is None and "--list-tasks" in sys.argv[1:]:
        listing = argparse.ArgumentParser(prog="python -m app.eval --list-tasks", description="the object tasks")
        listing.add_argument("--list-tasks", dest="list_tasks", action="store_true", required=True)
        return listing.parse_args(argv)
    parser = argparse.ArgumentParser(prog="python -m app.eval", description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("config", help="run config, e.g. configs/pick_place.yaml")
    parser.add_argument("--list-tasks", dest="list_tasks", action="store_true",
                        help="list the object tasks (robots, run file, the expert's measured success) and exit")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--policy", help="expert, random or module:factory")
    which.add_argument("--replay", metavar="DATASET", help="play a recorded dataset's actions")
    which.add_argument("--lerobot-policy", dest="lerobot_policy", metavar="PATH", help="a LeRobot policy folder")
    parser.add_argument("--episodes", type=int, required=True, help="episodes to evaluate")
    parser.add_argument("--out", required=True, help="output folder (eval_info.json, videos/)")
    parser.add_argument("--seed", type=int, default=0, help="episode i is seeded SEED + i (default 0)")
    parser.add_argument("--num-envs", dest="num_envs", type=int, default=None,
                        help="environments per wave in one world (default: min(episodes, 16))")
    parser.add_argument("--workers", type=int, default=1, help="Ray workers (default 1: this process alone)")
    parser.add_argument("--ray-address", dest="ray_address", default=None, help="a Ray cluster to run on")
    parser.add_argument("--videos", type=int, default=0, metavar="K", help="videos of the first K episodes")
    parser.add_argument("--obs-type", dest="obs_type", choices=OBS_TYPES, default=None,
                        help="default: pixels_agent_pos for a LeRobot policy, state otherwise")
    parser.add_argument("--action-mode", dest="action_mode", choices=ACTION_MODES, default=None,
                        help="default: ee_pose for the expert, joint otherwise")
    parser.add_argument("--image-size", dest="image_size", type=int, nargs=2, metavar=("H", "W"), default=None)
    parser.add_argument("--fps", type=int, default=None, help="environment steps per second (default video.fps)")
    smooth = parser.add_argument_group("remedies for jerky actions (docs/motion_quality.md)")
    smooth.add_argument("--action-filter", dest="action_filter", type=float, default=None, metavar="ALPHA",
                        help="low-pass the actions: a' = ALPHA a + (1 - ALPHA) a'_prev, ALPHA in (0, 1]")
    smooth.add_argument("--n-action-steps", dest="n_action_steps", type=int, default=None, metavar="N",
                        help="a LeRobot policy's actions executed per predicted chunk (its config's n_action_steps)")
    smooth.add_argument("--temporal-ensemble", dest="temporal_ensemble", type=float, default=None, metavar="COEFF",
                        help="ACT's temporal ensembling with this coefficient (one action step per prediction)")
    return parser.parse_args(argv)


def _check(args: argparse.Namespace) -> None:
    if not 1 <= args.episodes <= MAX_EPISODES:
        raise InputError(f"--episodes must be 1..{MAX_EPISODES}, got {args.episodes}")
    if args.num_envs is not None and not 1 <= args.num_envs <= 1024:
        raise InputError(f"--num-envs must be 1..1024 environments, got {args.num_envs}")
    if not 0 <= args.seed < 2**31 - MAX_EPISODES:
        raise InputError(f"--seed must be 0..{2**31 - MAX_EPISODES - 1}, got {args.seed}")
    if not 0 <= args.videos <= args.episodes:
        raise InputError(f"--videos must be 0..{args.episodes} (the episodes), got {args.videos}")
    if args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    if args.action_filter is not None:
        check_alpha(args.action_filter)
    if args.lerobot_policy is None and (args.n_action_steps is not None or args.temporal_ensemble is not None):
        raise InputError("--n-action-steps and --temporal-ensemble set a LeRobot policy's config: give "
                         "--lerobot-policy (or --action-filter for any policy)")


def _check_policy_fits(folder: Path, run, options: EnvOptions) -> None:
    """A LeRobot policy folder whose features or action length do not fit the environment: one InputError, before
    any episode (app.evaluation.lerobot_policy.check_features)."""
    from app.envs import make_vec_env
    from app.evaluation.lerobot_policy import check_features, folder_features

    reads, acts = folder_features(folder)
    env = make_vec_env(run, 1, **dataclasses.asdict(options))
    try:
        check_features(env, reads, acts)
    finally:
        env.close()


def _check_fresh(out: Path) -> None:
    """An --out holding an earlier evaluation's results is refused: its videos would be listed as this run's."""
    earlier = [p.name for p in (out / "eval_info.json",) if p.exists()] + \
        [f"videos/{p.name}" for p in sorted((out / "videos").glob("eval_episode_*.mp4"))[:3]]
    if earlier:
        raise InputError(f"--out {out}: holds an earlier evaluation ({', '.join(earlier)}); app.eval writes each run "
                         "into a new or empty folder, so that its eval_info.json lists only its own videos")


def _policy_and_scenes(args: argparse.Namespace, run, options: EnvOptions) -> tuple[PolicySpec, tuple | None]:
    """What the policy is and, for a replay, every episode's recorded scene."""
    if args.replay is None:
        if args.lerobot_policy is not None:
            from app.evaluation.lerobot_policy import (  # no lerobot import here
                check_lerobot, checked_overrides, policy_folder)

            folder = policy_folder(args.lerobot_policy)
            _check_policy_fits(folder, run, options)
            overrides = checked_overrides(folder, args.n_action_steps, args.temporal_ensemble)
            check_lerobot()
            return PolicySpec("lerobot", str(folder.resolve()), (), overrides, args.action_filter), None
        return PolicySpec("policy", args.policy, action_filter=args.action_filter), None
    dataset = load_dataset(args.replay)
    if args.episodes > len(dataset.episodes):
        raise InputError(f"--episodes {args.episodes}: {args.replay} holds {len(dataset.episodes)} episodes")
    scenes = read_scenes(args.replay, run)
    missing = [k for k in range(args.episodes) if k not in scenes]
    if missing:
        raise InputError(f"{args.replay}: no scene recorded for episodes {missing[:5]}{'...' if len(missing) > 5 else ''}"
                         " (meta/episode_scenes.jsonl, written by app.record): a replay would not start where the "
                         "recording did")
    return PolicySpec("replay", str(Path(args.replay).resolve()), tuple(range(args.episodes)),
                      action_filter=args.action_filter), tuple(
        scenes[k] for k in range(args.episodes))


def _options(args: argparse.Namespace) -> EnvOptions:
    expert = args.policy == "expert"
    obs = args.obs_type or ("pixels_agent_pos" if args.lerobot_policy else "state")
    mode = args.action_mode or ("ee_pose" if expert else "joint")
    return EnvOptions(obs, mode, image_size=None if args.image_size is None else tuple(args.image_size),
                      fps=args.fps).check()


def _jobs(args, run, options, spec, scenes, out: Path) -> list[EvalJob]:
    b = args.num_envs or min(args.episodes, 16)
    token = uuid.uuid4().hex
    return [EvalJob(run, options, b, spec, args.seed, first, min(b, args.episodes - first), scenes, args.videos,
                    str(out / "videos"), token) for first in range(0, args.episodes, b)]


def _run_jobs(args, jobs: list[EvalJob]) -> list:
    if args.workers <= 1:
        out = []
        try:
            for job in jobs:
                try:
                    out += run_job(job)
                except PolicyError as exc:
                    exc.done = out + exc.done
                    raise
        finally:
            close_here()
        return out
    from app.runtime.work_pool import run_everywhere

    try:
        found, _ = run_everywhere(jobs, run_job, args.workers, args.ray_address)
    finally:
        close_here()  # the environment of the jobs this process took
    return [r for records in found for r in records]


def body(args: argparse.Namespace) -> int:
    if args.list_tasks:
        print(task_table(task_rows()))
        return 0
    _check(args)
    _check_fresh(Path(args.out))
    run = load_run_config(args.config)
    options = _options(args)
    spec, scenes = _policy_and_scenes(args, run, options)
    outputs = OutputSet(args.out)  # after the checks (a refused run leaves no folder), before any episode runs
    try:
        return _evaluate(args, run, options, spec, scenes)
    except AppError:
        outputs.discard()  # the folder goes where this run made it and left it empty
        raise


def _evaluate(args: argparse.Namespace, run, options: EnvOptions, spec, scenes) -> int:
    out = Path(args.out).resolve()
    about = {"config": str(args.config), "policy": spec.value if spec.kind == "policy" else f"{spec.kind}:{spec.value}",
             "seed": args.seed, "options": dataclasses.asdict(options),
             "remedies": {"action_filter": spec.action_filter, **dict(spec.overrides)}}
    t0 = time.perf_counter()
    try:
        records = _run_jobs(args, _jobs(args, run, options, spec, scenes, out))
    except PolicyError as exc:
        info = eval_info(sorted(exc.done), time.perf_counter() - t0, about, _videos(out), str(exc))
        write_eval_info(out / "eval_info.json", info)
        raise
    info = eval_info(records, time.perf_counter() - t0, about, _videos(out))
    write_eval_info(out / "eval_info.json", info)
    log.info("%s", summary_line(info))
    log.info("wrote %s", out / "eval_info.json")
    return 0


def _videos(out: Path) -> list[str]:
    folder = out / "videos"
    return sorted((str(p) for p in folder.glob("eval_episode_*.mp4")),
                  key=lambda p: int(Path(p).stem.rsplit("_", 1)[1])) if folder.is_dir() else []


def main(argv: list[str] | None = None) -> int:
    return command_main(parse_args, body, argv, stopped="eval_info.json was not written")


if __name__ == "__main__":
    raise SystemExit(main())
