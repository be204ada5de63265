"""``eval_info.json`` in LeRobot's shape (``lerobot-eval``'s ``per_episode`` and ``aggregated``: ``pc_success``,
``avg_sum_reward``, ``avg_max_reward``, ``eval_s``, ``eval_ep_s``; ``video_paths``), with what we add: each
episode's failure reason, stall steps and causes, joint-limit excess and collisions; the success rate's 95 %
Wilson interval, failure reasons and stall causes counted over the episodes; the run's config, policy, seed and
whether it completed (an evaluation stopped by a policy's error keeps its finished episodes and says why)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np

from app.evaluation.runner import EpisodeRecord
from app.runtime.outputs import write_atomic

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate (successes of n), in percent; (0, 100) for n = 0."""
    if n == 0:
        return 0.0, 100.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return round(100 * max(0.0, centre - half), 3), round(100 * min(1.0, centre + half), 3)


def eval_info(records: list[EpisodeRecord], eval_s: float, about: dict, video_paths: list[str],
              error: str | None = None) -> dict:
    """The eval_info.json content (see the module docstring); ``about``: config, policy, seed, options."""
    n = len(records)
    wins = sum(r.success for r in records)
    causes = Counter()
    for r in records:
        causes.update(r.stall_causes)
    aggregated = {
        "avg_sum_reward": sum(r.sum_reward for r in records) / n if n else float("nan"),
        "avg_max_reward": sum(r.max_reward for r in records) / n if n else float("nan"),
        "pc_success": 100.0 * wins / n if n else float("nan"),
        "pc_success_ci95": list(wilson_interval(wins, n)),
        "n_episodes": n, "n_success": wins,
        "failure_reasons": dict(sorted(Counter(r.reason for r in records if not r.success).items())),
        "stall_steps": sum(r.stall_steps for r in records), "stall_causes": dict(sorted(causes.items())),
        "episodes_with_stalls": sum(r.stall_steps > 0 for r in records),
        "max_limit_excess": max((r.limit_excess for r in records), default=0.0),
        "eval_s": eval_s, "eval_ep_s": eval_s / n if n else float("nan"),
        "motion": motion_summary(records),
    }
    per_episode = [{**r._asdict(), "sum_reward": r.sum_reward, "max_reward": r.max_reward} for r in records]
    return {"per_episode": per_episode, "aggregated": aggregated, "video_paths": video_paths,
            "complete": error is None, "error": error, **about}


def motion_summary(records: list[EpisodeRecord]) -> dict:
    """The episodes' motion quality: how many were judged and smooth, what flagged the others first (counted), the
    commands' IK branch changes (summed), and
    per ``<source>_<quantity>_ratio`` (peak |value| / limit) the median and the largest over the episodes."""
    judged = [r.motion for r in records if r.motion]
    ratios = sorted({k for m in judged for k in m if k.endswith("_ratio")})
    return {"judged": len(judged), "smooth": sum(m["verdict"] == "smooth" for m in judged),
            "flagged_first_by": dict(sorted(Counter(m["first"] for m in judged if m["first"]).items())),
            "branch_changes": int(sum(m.get("branch_changes", 0) for m in judged)),
            "ratios": {k: {"median": float(np.median([m[k] for m in judged])),
                           "max": float(max(m[k] for m in judged))} for k in ratios}}


def write_eval_info(path: Path, info: dict) -> Path:
    """``info`` as JSON at ``path``, atomically (NaN written as null: JSON has none)."""
    text = json.dumps(_no_nan(info), indent=2)
    return write_atomic(Path(path), ".json", lambda tmp: Path(tmp).write_text(text))


def _no_nan(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _no_nan(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_no_nan(v) for v in x]
    return x


def summary_line(info: dict) -> str:
    """One line: success rate with its interval, reasons, stalls, time."""
    a = info["aggregated"]
    lo, hi = a["pc_success_ci95"]
    reasons = ", ".join(f"{k} {v}" for k, v in a["failure_reasons"].items()) or "none"
    stalls = ", ".join(f"{k} {v}" for k, v in a["stall_causes"].items()) or "none"
    m = a.get("motion") or {"judged": 0}
    motion = "" if not m["judged"] else f"motion: {m['smooth']}/{m['judged']} smooth" + (
        " (flagged first by " + ", ".join(f"{k} {v}" for k, v in m["flagged_first_by"].items()) + ")"
        if m["flagged_first_by"] else "") + "; "
    return (f"{info['policy']}: success {a['n_success']}/{a['n_episodes']} = {a['pc_success']:.1f} % "
            f"(95 % CI {lo:.1f}-{hi:.1f} %); failures: {reasons}; stalled steps: {stalls}; {motion}"
            f"{a['eval_s']:.1f} s ({a['eval_ep_s']:.2f} s/episode)")
