"""The learning loop of ``python -m app.learn``: demonstrations (recorded through the environment, or a given
dataset), lerobot-train as a child process, and each checkpoint evaluated as it is finished, the report and the
curve rewritten after each, so that a run stopped at any point (time budget, Ctrl-C) leaves every finished
checkpoint, its evaluation and the curve so far."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import NamedTuple

from tqdm import tqdm

from app.envs.options import EnvOptions
from app.learning.curve import Point, evaluate_checkpoint, learn_report, plot_curve, write_report
from app.learning.demo_dataset import DemoWriter, demo_spec
from app.learning.demos import expert_joint_actions, play_demos
from app.learning.training import Trainer

log = logging.getLogger("app.learn")
POLL_S = 2.0  # [s] between looks at the trainer's checkpoints


class LearnPlan(NamedTuple):
    """What a learning run does: the run config, observation options, demonstrations (count and first seed),
    the trainer's command, the budget (steps or minutes), evaluation (episodes, first seed, environments per
    wave), the output folder."""

    run: object
    options: EnvOptions
    episodes: int
    seed: int
    command: list
    steps: int | None
    minutes: float | None
    eval_episodes: int
    eval_seed: int
    num_envs: int
    out: Path
    action_filter: float | None = None  # the evaluations' low-pass on the actions (app.evaluation.smoothing)


def record_demos(plan: LearnPlan, cameras: list, fps: int) -> dict:
    """The plan's demonstrations into ``out/dataset``; returns what was recorded (kept, tried, failures)."""
    run, seeds, mode = plan.run, list(range(plan.seed, plan.seed + plan.episodes)), plan.options.action_mode
    log.info("recording %d demonstrations (the scripted expert, seeds %d..%d, %s actions)", plan.episodes, seeds[0],
             seeds[-1], mode)
    actions = expert_joint_actions(run, seeds, plan.num_envs) if mode == "joint" else None
    writer = DemoWriter(plan.out / "dataset", run, demo_spec(run, fps, plan.options.obs_type, cameras, mode))
    failures: dict = {}
    with tqdm(total=len(seeds), desc="demonstrations", unit="episode", disable=None) as bar:
        def keep(demo) -> None:
            if demo.success:
                writer.append(demo)
            else:
                failures[demo.reason] = failures.get(demo.reason, 0) + 1
            bar.update(1)

        size = None if plan.options.image_size is None else tuple(plan.options.image_size)
        play_demos(run, seeds, actions, plan.num_envs, plan.options.obs_type, size, on_demo=keep)
    log.info("%d of %d demonstrations kept in %s%s", writer.n_episodes, len(seeds), plan.out / "dataset",
             f" (left out: {failures})" if failures else "")
    return {"tried": len(seeds), "kept": writer.n_episodes, "failures": failures, "seeds": [seeds[0], seeds[-1]]}


def train_and_evaluate(plan: LearnPlan, dataset: Path, about: dict) -> list[Point]:
    """Trains on ``dataset``, evaluating each finished checkpoint; returns the curve. The report and the plot are
    rewritten after every evaluation; a stop (time budget, Ctrl-C) ends the trainer and keeps what is done."""
    trainer = Trainer(plan.command, plan.out / "train", plan.out / "train.log")
    points: list[Point] = []
    total = plan.steps if plan.steps else int(plan.minutes * 60)
    bar = tqdm(total=total, desc="training", unit="step" if plan.steps else "s", disable=None)
    try:
        while True:
            running = trainer.running()
            for ckpt in trainer.new_checkpoints():
                with trainer.paused():  # the two would share the cores; the evaluation is not training time
                    points.append(evaluate_checkpoint(plan.run, plan.options, ckpt.folder, plan.eval_episodes,
                                                      plan.eval_seed, plan.num_envs, ckpt.step, ckpt.minutes,
                                                      plan.action_filter))
                _said(points[-1])
                _write(plan, points, about, complete=False)
            if not running:
                break
            if plan.minutes is not None and trainer.minutes >= plan.minutes:
                log.info("the %.0f-minute budget is spent: stopping the trainer (finished checkpoints kept)",
                         plan.minutes)
                trainer.stop()
                continue
            _progress(bar, trainer, plan)
            time.sleep(POLL_S)
        failure = trainer.failure() if plan.minutes is None or trainer.minutes < plan.minutes else None
        about["trainer_error"] = failure
        _write(plan, points, about, complete=failure is None)
        return points
    finally:
        bar.close()
        trainer.stop()


def _progress(bar: tqdm, trainer: Trainer, plan: LearnPlan) -> None:
    seen = trainer.last_loss()
    done = int(seen[0].replace("K", "000")) if plan.steps and seen and seen[0].replace("K", "").isdigit() else None
    bar.n = min(bar.total, done if plan.steps else int(trainer.minutes * 60)) if (done or not plan.steps) else bar.n
    if seen:
        bar.set_postfix_str(f"loss {seen[1]}")
    bar.refresh()


def _said(p: Point) -> None:
    reasons = ", ".join(f"{k} {v}" for k, v in p.failures.items()) or "none"
    log.info("checkpoint %d (%.1f min): success %d/%d = %.1f %% (95 %% CI %.1f-%.1f %%); failures: %s", p.step,
             p.minutes, p.successes, p.episodes, p.pc_success, *p.ci95, reasons)


def _write(plan: LearnPlan, points: list[Point], about: dict, complete: bool) -> None:
    write_report(plan.out / "learn_report.json", learn_report(points, {**about, "complete": complete}))
    if points:
        title = f"{about['policy']} on {about['config']} ({about['obs_type']}), {about['demonstrations']['kept']} demos"
        plot_curve(plan.out / "learning_curve.png", points, title)
