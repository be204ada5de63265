"""A learning run's evaluations and what it writes: each checkpoint evaluated on seeds the demonstrations never
used (app.evaluation, the same rollout as ``app.eval --lerobot-policy``), ``learn_report.json`` (the final
success rate with its 95 % Wilson interval, the curve of success against training steps and minutes, failure
reasons, the versions) and ``learning_curve.png``."""

from __future__ import annotations

import json
import platform
import uuid
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.envs.options import EnvOptions
from app.evaluation.report import eval_info, wilson_interval
from app.evaluation.shards import EvalJob, PolicySpec, close_here, run_job
from app.runtime.outputs import write_atomic

EVAL_SEED_OFFSET = 1_000_000  # evaluation seeds start this far above the demonstrations' first seed


class Point(NamedTuple):
    """One checkpoint's evaluation: training step and minutes, successes of episodes, the 95 % interval [%],
    failure reasons (reason -> count)."""

    step: int
    minutes: float
    successes: int
    episodes: int
    ci95: tuple[float, float]
    failures: dict

    @property
    def pc_success(self) -> float:
        return 100.0 * self.successes / self.episodes


def evaluate_checkpoint(run, options: EnvOptions, folder: Path, episodes: int, seed: int, num_envs: int = 25,
                        step: int = 0, minutes: float = 0.0, action_filter: float | None = None) -> Point:
    """``episodes`` episodes of the policy in ``folder`` seeded ``seed``.. in waves of ``num_envs``, its actions
    low-passed with ``action_filter`` where given (app.evaluation.smoothing)."""
    b = min(num_envs, episodes)
    token = uuid.uuid4().hex
    spec = PolicySpec("lerobot", str(folder), action_filter=action_filter)
    jobs = [EvalJob(run, options, b, spec, seed, first, min(b, episodes - first), None, 0, "", token)
            for first in range(0, episodes, b)]
    try:
        records = [r for job in jobs for r in run_job(job)]
    finally:
        close_here()
    agg = eval_info(records, 0.0, {}, [])["aggregated"]
    wins = agg["n_success"]
    return Point(step, minutes, wins, agg["n_episodes"], tuple(wilson_interval(wins, len(records))),
                 agg["failure_reasons"])


def versions() -> dict:
    """Python's and the packages' versions a run used."""
    out = {"python": platform.python_version()}
    for name in ("lerobot", "torch", "pybullet", "numpy", "app"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def learn_report(points: list[Point], about: dict) -> dict:
    """The report: ``final`` (the last checkpoint's evaluation), ``best``, ``curve`` (every checkpoint), and
    ``about`` (the command's settings, demonstrations, versions, whether it completed)."""
    curve = [{**p._asdict(), "ci95": list(p.ci95), "pc_success": p.pc_success} for p in points]
    final = curve[-1] if curve else None
    best = max(curve, key=lambda c: (c["pc_success"], c["step"])) if curve else None
    return {"final": final, "best": best, "curve": curve, **about, "versions": versions()}


def write_report(path: Path, report: dict) -> Path:
    text = json.dumps(report, indent=2)
    return write_atomic(Path(path), ".json", lambda tmp: Path(tmp).write_text(text))


def plot_curve(path: Path, points: list[Point], title: str) -> Path:
    """Success [%] with its 95 % interval against training steps (bottom axis) and minutes (top axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    steps = np.array([p.step for p in points], dtype=float)
    rate = np.array([p.pc_success for p in points])
    lo, hi = np.array([p.ci95[0] for p in points]), np.array([p.ci95[1] for p in points])
    ax.fill_between(steps, lo, hi, alpha=0.25, color="tab:blue", label="95 % interval")
    ax.plot(steps, rate, "o-", color="tab:blue", label="success")
    ax.set_xlabel("training steps")
    ax.set_ylabel(f"success over {points[0].episodes if points else 0} held-out seeds [%]")
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    if len(points) >= 2:
        top = ax.secondary_xaxis("top", functions=(
            lambda s: np.interp(s, steps, [p.minutes for p in points]),
            lambda m: np.interp(m, [p.minutes for p in points], steps)))
        # minutes only where they were measured: between checkpoints the pace is not known to be steady
        top.set_xticks([p.minutes for p in points], [f"{p.minutes:.0f}" for p in points])
        top.set_xlabel("training minutes at each checkpoint (this machine)")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper left")
    fig.tight_layout()

    def save(tmp: str) -> None:
        fig.savefig(tmp, format="png")

    try:
        return write_atomic(Path(path), ".png", save)
    finally:
        plt.close(fig)
