"""Command line for sweeps: ``python -m app.sweep CONFIG --seeds 0:100 [--set KEY=VALUE ...] [--workers N]
[--ray-address A] --out DIR [--video]``.

One episode per seed and setting (``--set controller.gain=2.0``; the same key given twice, or more, sweeps
over its values), each a whole run whose report goes to ``DIR/<episode>/``; episodes run on N Ray workers
and this process, whoever is free first (this process alone for N = 1). ``DIR/summary.json`` and
``summary.png``: success rate (every environment placed its object in a pick or hand-over, else reached its
target; the placements' failure reasons counted), error percentiles, stall and solver-failure counts, the worst seeds,
per setting; an episode that fails is listed there with its error, not fatal. Re-running skips the
episodes whose report is already in DIR.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import yaml

from app.errors import ConfigError
from app.runtime.command import signal_behind

log = logging.getLogger("app.sweep")


MAX_EPISODES = 10_000  # episodes in one sweep (seeds x settings): each writes a folder and holds a summary


def parse_seeds(text: str) -> list[int]:
    """'0:100' (end excluded), '3', or '1,5,9' -> seeds (at most MAX_EPISODES, each in 0..2**32-1)."""
    try:
        if ":" in text:
            a, b = (int(x) for x in text.split(":"))
            if b - a > MAX_EPISODES:
                raise ConfigError(f"--seeds {text}: {b - a} seeds, more than one sweep runs (MAX_EPISODES = "
                                  f"{MAX_EPISODES} in app/sweep.py): split it into several sweeps")
            seeds = list(range(a, b))
        else:
            seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise ConfigError(f"--seeds must be START:END, N or N,M,...; got {text!r}") from None
    if not seeds or min(seeds) < 0 or max(seeds) >= 2 ** 32:
        raise ConfigError(f"--seeds must name at least one seed, each in 0..2**32-1, got {text!r}")
    return seeds


def parse_sets(items: list[str]) -> list[dict[str, object]]:
    """['controller.gain=1', 'controller.gain=2', 'task.radius=0.05'] -> the settings grid (YAML values)."""
    values: dict[str, list] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set takes KEY=VALUE (e.g. controller.gain=2.0), got {item!r}")
        try:
            values.setdefault(key.strip(), []).append(yaml.safe_load(text))
        except yaml.YAMLError as exc:
            raise ConfigError(f"--set {item!r}: the value is not YAML ({exc.problem})") from None
    keys = list(values)
    if math.prod(len(v) for v in values.values()) > MAX_EPISODES:
        raise ConfigError(f"--set: {' x '.join(str(len(v)) for v in values.values())} settings, more than one "
                          f"sweep runs (MAX_EPISODES = {MAX_EPISODES} in app/sweep.py)")
    return [dict(zip(keys, combo)) for combo in itertools.product(*(values[k] for k in keys))] or [{}]


def episode_name(seed: int, setting: dict, vary: bool) -> str:
    tag = "_".join(f"{k}={v}" for k, v in setting.items()) if vary else ""
    return f"seed{seed:04d}" + ("_" + re.sub(r"[^A-Za-z0-9.=_-]+", "-", tag) if tag else "")


def run_episode(config: str, seed: int, setting: dict, out_dir: str, video: bool) -> dict:
    """One episode, its report written into ``out_dir``; returns its summary (or its error)."""
    from app.config.loader import load_run_config
    from app.episode.execute import execute

    try:
        run = load_run_config(config, sets=setting, seed=seed)
        result = execute(run, Path(out_dir), video=video, show_progress=False)
        return {"ok": True, "summary": result.summary}
    except Exception as exc:  # reported in the sweep's summary, not fatal to the sweep
        if (stop := signal_behind(exc)) is not None:  # the user stopped the sweep while a kernel ran
            raise stop from None
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:400]}


def _done(folder: Path) -> dict | None:
    try:
        return {"ok": True, "summary": json.loads((folder / "report.json").read_text())["summary"]}
    except (OSError, ValueError, KeyError):
        return None


def run_all(jobs: list[tuple], workers: int, address: str | None, video: bool) -> list[dict]:
    """Every (config, seed, setting, folder) job; finished ones skipped; with progress."""
    from app.render.progress import Progress

    results: list[dict | None] = [_done(Path(j[3])) for j in jobs]
    todo = [i for i, r in enumerate(results) if r is None]
    if len(todo) < len(jobs):
        log.info("%d of %d episodes already in the output folder: skipped", len(jobs) - len(todo), len(jobs))
    progress = Progress("episodes", len(jobs), unit="episode")
    progress.update(len(jobs) - len(todo))
    try:
        if workers <= 1:
            for n, i in enumerate(todo, 1):
                results[i] = run_episode(*jobs[i], video)
                progress.update(len(jobs) - len(todo) + n)
        else:
            from app.runtime.work_pool import run_everywhere

            found, _ = run_everywhere([(*jobs[i], video) for i in todo], episode_of, workers, address,
                                      lambda i: progress.add(1))
            for i, value in zip(todo, found):
                results[i] = value
    finally:
        progress.close()
    return results


def episode_of(args: tuple) -> dict:
    """:func:`run_episode` for one job tuple (config, seed, setting, folder, video); here or in a Ray worker."""
    return run_episode(*args)


def summarize(jobs: list[tuple], results: list[dict], settings: list[dict]) -> dict:
    """The sweep's figures, over all episodes and per setting."""
    def block(rows):
        ok = [r for r in rows if r["result"]["ok"]]
        s = [r["result"]["summary"] for r in ok]
        pos = np.array([x["pos_err_final_max_m"] for x in s], dtype=float)
        rot = np.array([x["rot_err_final_max_rad"] for x in s], dtype=float)
        pct = lambda a: {f"p{q}": float(np.percentile(a, q)) for q in (50, 90, 99)} | {"max": float(a.max())} \
            if a.size else {}  # noqa: E731
        worst = sorted(ok, key=lambda r: -r["result"]["summary"]["pos_err_final_max_m"])[:5]
        reasons = {}
        for x in s:
            for reason, envs in (x.get("failed") or {}).items():
                reasons[reason] = reasons.get(reason, 0) + len(envs)
        return {"episodes": len(rows), "failed_episodes": len(rows) - len(ok),
                "success_rate": float(np.mean([goal_met(x) == x["n_envs"] for x in s])) if s else None,
                "success": "every environment placed its object (a pick or hand-over), else reached its target",
                "envs_reached_fraction": float(sum(x["reached"] for x in s) / max(1, sum(x["n_envs"] for x in s))),
                **({"envs_placed_fraction": float(sum(x["placed"] for x in s) / max(1, sum(x["n_envs"] for x in s))),
                    "failure_reasons": reasons} if any("placed" in x for x in s) else {}),
                "pos_err_final_m": pct(pos), "rot_err_final_rad": pct(rot),
                "stalled_envs": int(sum(x["stalled_final"] for x in s)),
                "solver_failed_envs": int(sum(x["solver_failed_final"] for x in s)),
                "worst_seeds": [{"seed": r["seed"], "pos_err_final_max_m": r["result"]["summary"]["pos_err_final_max_m"]}
                                for r in worst]}

    rows = [{"seed": j[1], "setting": j[2], "episode": Path(j[3]).name, "result": r} for j, r in zip(jobs, results)]
    return {"all": block(rows),
            "per_setting": [{"setting": st, **block([r for r in rows if r["setting"] == st])} for st in settings],
            "failed": [{"episode": r["episode"], "error": r["result"]["error"]} for r in rows if not r["result"]["ok"]],
            "episodes": [{"episode": r["episode"], "seed": r["seed"], "setting": r["setting"], "ok": r["result"]["ok"],
                          **(_episode_row(r["result"]["summary"]) if r["result"]["ok"] else {})} for r in rows]}


def goal_met(summary: dict) -> int:
    """Environments that met the run's goal: placed its object (a pick or hand-over, as ``--check`` judges), else
    reached its target."""
    return summary.get("placed", summary["reached"])


def _episode_row(s: dict) -> dict:
    """An episode's line in summary.json: reached (and placed, with the failures' reasons, where it picks)."""
    row = {"reached": s["reached"], "n_envs": s["n_envs"], "pos_err_final_max_m": s["pos_err_final_max_m"]}
    if "placed" in s:
        row |= {"placed": s["placed"], "failed": s.get("failed") or {}}
    return row


def plot_summary(path: Path, summary: dict, title: str) -> None:
    """PNG of :func:`summary_figure` at ``path`` (atomically)."""
    from app.render.report import save_figure_atomic

    save_figure_atomic(summary_figure(summary, title), path)


def summary_figure(summary: dict, title: str):
    """Final position error per episode, worst last (episodes numbered 1..N; a log axis with plain labels down to
    0.01 mm, linear below), and the success rate per setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    errs = sorted(e["pos_err_final_max_m"] * 1e3 for e in summary["episodes"] if e["ok"])
    ax1.plot(range(1, len(errs) + 1), errs, ".-")
    ax1.set_yscale("symlog", linthresh=1e-2)
    ax1.set_ylim(0.0, max(max(errs, default=0.0) * 1.5, 0.1))
    ax1.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax1.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax1.set_xlabel("episode, sorted by error")
    ax1.set_ylabel("worst final position error [mm]")
    ax1.grid(alpha=0.3)
    labels = [", ".join(f"{k}={v}" for k, v in s["setting"].items()) or "config" for s in summary["per_setting"]]
    rates = [100 * (s["success_rate"] or 0.0) for s in summary["per_setting"]]
    ax2.bar(range(len(rates)), rates, color="tab:green")
    ax2.set_xticks(range(len(rates)), labels, rotation=20, ha="right", fontsize=8)
    ax2.set_ylabel("episodes with every env's goal met [%]")
    ax2.set_ylim(0, 105)
    fig.suptitle(f"{title}: {summary['all']['episodes']} episodes, {summary['all']['failed_episodes']} failed")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    from app.runtime.command import command_main

    parser = argparse.ArgumentParser(prog="python -m app.sweep", description=__doc__.split("\n\n")[1].replace("``", ""))
    parser.add_argument("config", help="run config, e.g. configs/single_ik.yaml")
    parser.add_argument("--seeds", default="0:10", help="START:END (end excluded), N, or N,M,... (default 0:10)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a config value (dotted key, YAML value); repeat a key to sweep over its values")
    parser.add_argument("--workers", type=int, default=1, help="Ray worker processes (1: this process)")
    parser.add_argument("--ray-address", default=None, help="join this Ray cluster (default: $RAY_ADDRESS or local)")
    parser.add_argument("--out", required=True, help="output folder: one subfolder per episode, summary.json/.png")
    parser.add_argument("--video", action="store_true", help="also render each episode's video (slow)")
    return command_main(parser.parse_args, _sweep, argv, "finished episodes are kept (a re-run skips them), nothing partial")


def _check_workers(workers: int, episodes: int, address: str | None) -> None:
    """1 <= workers <= the episodes, and on a local cluster (no address) <= this machine's CPUs."""
    cpus = os.cpu_count() or 1
    local = not (address or os.environ.get("RAY_ADDRESS"))
    limit = min(episodes, cpus) if local else episodes
    if not 1 <= workers <= limit:
        raise ConfigError(f"--workers must be 1..{limit} ({episodes} episodes" + (f", {cpus} CPUs here" if local else "")
                          + f"; a cluster given by --ray-address or RAY_ADDRESS may have more), got {workers}")


def _sweep(args: argparse.Namespace) -> int:
    from app.config.loader import load_run_config

    seeds, settings = list(dict.fromkeys(parse_seeds(args.seeds))), parse_sets(args.set)  # each seed once
    if len(seeds) * len(settings) > MAX_EPISODES:
        raise ConfigError(f"{len(seeds)} seeds x {len(settings)} settings = {len(seeds) * len(settings)} "
                          f"episodes, more than one sweep runs (MAX_EPISODES = {MAX_EPISODES} in app/sweep.py)")
    _check_workers(args.workers, len(seeds) * len(settings), args.ray_address)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ConfigError(f"--out {args.out}: exists and is not a folder; name a new or existing folder")
    for setting in settings:
        load_run_config(args.config, sets=setting)  # every setting checked before any episode runs
    from app.runtime.outputs import OutputSet

    OutputSet(args.out)  # a folder that cannot be made or written is refused before any episode runs
    out = Path(args.out).resolve()  # the same folder for workers on other machines' working dirs
    vary = len(settings) > 1 or bool(settings[0])
    jobs = [(str(Path(args.config).resolve()), seed, st, str(out / episode_name(seed, st, vary)))
            for st in settings for seed in seeds]
    folders = [j[3] for j in jobs]
    if len(set(folders)) < len(folders):
        clash = next(f for f in folders if folders.count(f) > 1)
        raise ConfigError(f"two settings give the same episode folder {Path(clash).name!r}: make the --set "
                          "values differ in letters, digits or . = _ -")
    results = run_all(jobs, args.workers, args.ray_address, args.video)
    from app.render.report import write_json_atomic
    from app.runtime.ray_session import ray_released

    with ray_released():
        summary = summarize(jobs, results, settings)
        write_json_atomic(out / "summary.json", summary)
        plot_summary(out / "summary.png", summary, Path(args.config).stem)

    a = summary["all"]
    log.info("%s: %d episodes, %d failed; success rate %s; worst final position error %s", out / "summary.json",
             a["episodes"], a["failed_episodes"], "n/a" if a["success_rate"] is None else f"{100 * a['success_rate']:.0f} %",
             f"{a['pos_err_final_m'].get('max', float('nan')) * 1e3:.3f} mm" if a["pos_err_final_m"] else "n/a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
