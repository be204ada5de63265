"""Command line: ``python -m app.learn CONFIG --policy {act,diffusion} --obs-type {state,pixels_agent_pos}
[--action-mode {ee_pose,joint}] (--episodes N | --dataset DIR) (--steps S | --train-minutes M) --eval-episodes K
--seed SEED --out DIR [--eval-every S] [--num-envs B] [--image-size H W] [-- LEROBOT-TRAIN OPTIONS]``.

Teaches a policy the run config's task from the scripted expert's demonstrations and says how well it learnt:
N demonstrations recorded through the environment the policy will act in (seeds SEED..SEED+N-1; only successful
ones kept; app.learning.demos), or a dataset given with ``--dataset``; LeRobot's own trainer (lerobot-train,
``--policy.type`` ACT or Diffusion Policy, CPU) for S steps or M minutes, a checkpoint every ``--eval-every``
steps; each checkpoint evaluated as training goes on K seeds the demonstrations never used (SEED + 1,000,000 +
i), as ``app.eval --lerobot-policy`` evaluates. Writes ``DIR/dataset/``, ``DIR/train/`` (lerobot's output: the
checkpoints), ``DIR/train.log``, ``DIR/learn_report.json`` (the final success rate with its 95 % interval, the
curve of success against steps and minutes, failure reasons, versions) and ``DIR/learning_curve.png``. Options
after ``--`` go to lerobot-train unchanged (e.g. ``-- --policy.chunk_size=50 --batch_size=64``). Ctrl-C stops
the trainer and keeps every finished checkpoint with its evaluation. Needs the ``[learn]`` extra (lerobot and
torch).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from pathlib import Path

from app.config.loader import load_run_config
from app.dataset import load_dataset
from app.envs.options import EnvOptions
from app.envs.pixels import observed_cameras
from app.errors import InputError
from app.evaluation.smoothing import check_alpha
from app.learning.curve import EVAL_SEED_OFFSET
from app.learning.loop import LearnPlan, record_demos, train_and_evaluate
from app.learning.training import CPU_STEPS_PER_S, PRESETS, train_command
from app.runtime.command import command_main
from app.runtime.outputs import OutputSet

log = logging.getLogger("app.learn")
OBS_TYPES = ("state", "pixels_agent_pos")
ACTION_MODES = ("ee_pose", "joint")
MAX_STEPS, MAX_MINUTES = 10_000_000, 7 * 24 * 60


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(prog="python -m app.learn", description=__doc__.split("\n\n")[1].strip())
    p.add_argument("config", help="run config of the task, e.g. configs/pick_place.yaml")
    p.add_argument("--policy", choices=sorted(PRESETS), default="act", help="LeRobot policy type (default act)")
    p.add_argument("--obs-type", dest="obs_type", choices=OBS_TYPES, default="state")
    p.add_argument("--action-mode", dest="action_mode", choices=ACTION_MODES, default="ee_pose",
                   help="what the policy outputs: ee_pose (per arm the end effector's pose and the finger; the "
                        "default) or joint (joint targets)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--episodes", type=int, help="demonstrations to record")
    source.add_argument("--dataset", help="a LeRobot dataset to train on instead (app.learn's or app.record's)")
    budget = p.add_mutually_exclusive_group(required=True)
    budget.add_argument("--steps", type=int, help="training steps")
    budget.add_argument("--train-minutes", dest="train_minutes", type=float, help="training time [min]")
    p.add_argument("--eval-episodes", dest="eval_episodes", type=int, default=50, help="per checkpoint (50)")
    p.add_argument("--eval-every", dest="eval_every", type=int, default=2000, help="steps between checkpoints")
    p.add_argument("--seed", type=int, default=0, help="first demonstration seed and the trainer's seed (0)")
    p.add_argument("--num-envs", dest="num_envs", type=int, default=25, help="environments per wave (25)")
    p.add_argument("--image-size", dest="image_size", type=int, nargs=2, metavar=("H", "W"), default=None,
                   help="camera size for pixels_agent_pos (default 224 224)")
    p.add_argument("--grasp-choice", dest="grasp_choice", choices=("least_turn", "score"), default="least_turn",
                   help="the demonstrating expert's grasp among a symmetric object's equivalent ones (pick_place): "
                        "least_turn (nearest the gripper's closing direction: a continuous function of the object's "
                        "yaw; the default) or score (the config's)")
    p.add_argument("--action-filter", dest="action_filter", type=float, default=None, metavar="ALPHA",
                   help="the evaluations low-pass the policy's actions (app.eval --action-filter; default none)")
    p.add_argument("--out", required=True, help="output folder (new, or empty)")
    args = p.parse_args(argv)
    args.extra = extra
    return args


def _check(args: argparse.Namespace) -> None:
    checks = [(args.episodes is None or 1 <= args.episodes <= 100_000,
               f"--episodes must be 1..100000, got {args.episodes}"),
              (args.steps is None or 1 <= args.steps <= MAX_STEPS, f"--steps must be 1..{MAX_STEPS}, got {args.steps}"),
              (args.train_minutes is None or 0 < args.train_minutes <= MAX_MINUTES,
               f"--train-minutes must be > 0 and at most {MAX_MINUTES} (a week), got {args.train_minutes}"),
              (1 <= args.eval_episodes <= 10_000, f"--eval-episodes must be 1..10000, got {args.eval_episodes}"),
              (1 <= args.eval_every <= MAX_STEPS, f"--eval-every must be 1..{MAX_STEPS} steps, got {args.eval_every}"),
              (0 <= args.seed < 2**31 - 2 * EVAL_SEED_OFFSET, f"--seed must be 0..{2**31 - 2 * EVAL_SEED_OFFSET - 1}, "
                                                             f"got {args.seed}"),
              (1 <= args.num_envs <= 256, f"--num-envs must be 1..256, got {args.num_envs}"),
              (args.episodes is None or args.episodes < EVAL_SEED_OFFSET, "--episodes must stay below the "
                                                                          "evaluation seeds' offset")]
    for ok, message in checks:
        if not ok:
            raise InputError(message)
    if args.action_filter is not None:
        check_alpha(args.action_filter)
    out = Path(args.out)
    if out.is_dir() and any(out.iterdir()):
        raise InputError(f"--out {out}: not empty; app.learn writes a new run into a new or empty folder")
    if args.dataset is not None and not (Path(args.dataset) / "meta" / "info.json").is_file():
        raise InputError(f"--dataset {args.dataset}: no LeRobot dataset there (meta/info.json)")


def _needs_lerobot() -> None:
    try:
        import lerobot  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        raise InputError(f"app.learn needs lerobot and torch in this Python ({exc}): pip install -e '.[learn]' "
                         "(see the README's Learning section)") from None


def _plan(args: argparse.Namespace, run, options: EnvOptions, out: Path, dataset: Path) -> LearnPlan:
    steps = args.steps or MAX_STEPS
    decay = args.steps or max(1, round(args.train_minutes * 60 * CPU_STEPS_PER_S))
    command = train_command(dataset, out / "train", args.policy, steps, min(args.eval_every, steps), args.seed,
                            args.extra, decay)
    return LearnPlan(run, options, args.episodes or 0, args.seed, command, args.steps, args.train_minutes,
                     args.eval_episodes, args.seed + EVAL_SEED_OFFSET, args.num_envs, out, args.action_filter)


def body(args: argparse.Namespace) -> int:
    _check(args)
    _needs_lerobot()
    run = load_run_config(args.config)
    if hasattr(run.motion, "grasp_choice"):  # the demonstrations' expert (an evaluation never uses it)
        run = dataclasses.replace(run, motion=dataclasses.replace(run.motion, grasp_choice=args.grasp_choice))
    size = tuple(args.image_size) if args.image_size else ((224, 224) if args.obs_type != "state" else None)
    options = EnvOptions(args.obs_type, args.action_mode, image_size=size).check()
    OutputSet(args.out)
    out = Path(args.out).resolve()
    dataset = Path(args.dataset).resolve() if args.dataset else out / "dataset"
    plan = _plan(args, run, options, out, dataset)
    about = {"config": str(args.config), "policy": args.policy, "obs_type": args.obs_type,
             "action_mode": args.action_mode, "seed": args.seed,
             "grasp_choice": getattr(run.motion, "grasp_choice", None), "action_filter": args.action_filter,
             "eval_seeds": [plan.eval_seed, plan.eval_seed + args.eval_episodes - 1],
             "budget": {"steps": args.steps, "minutes": args.train_minutes}, "trainer_command": plan.command[1:]}
    if args.dataset is None:
        about["demonstrations"] = record_demos(plan, observed_cameras(run, options), run.video.fps)
    else:
        about["demonstrations"] = {"dataset": str(dataset), "kept": len(load_dataset(dataset).episodes)}
    points = train_and_evaluate(plan, dataset, about)
    if about.get("trainer_error"):
        raise InputError(f"{about['trainer_error']} (its log: {out / 'train.log'})")
    if not points:
        raise InputError(f"training ended before its first checkpoint: raise --train-minutes or lower --eval-every "
                         f"(its log: {out / 'train.log'})")
    last = points[-1]
    log.info("final (step %d, %.1f min): success %d/%d = %.1f %% (95 %% CI %.1f-%.1f %%); wrote %s", last.step,
             last.minutes, last.successes, last.episodes, last.pc_success, *last.ci95, out / "learn_report.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    return command_main(parse_args, body, argv, stopped="the trainer was stopped; finished checkpoints, their "
                                                        "evaluations and learn_report.json are kept in --out")


if __name__ == "__main__":
    raise SystemExit(main())
