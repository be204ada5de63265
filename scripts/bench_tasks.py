"""Every object task's scripted expert and a random policy through ``app.eval``: successes of N seeded episodes
with the 95 % Wilson interval and every failure's reason; writes ``app/tasks/expert_success.json``, which
``python -m app.eval --list-tasks`` shows.

Usage: python scripts/bench_tasks.py [--episodes 100] [--tasks stack,peg_in_hole] [--no-random] [--no-write]

Each task runs on its own run file (its ``config``); the expert acts in the ee_pose action mode, the random policy
in the joint mode (app.eval's defaults). A random policy that succeeds, or a failure without a reason, is
reported as an error (exit 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from app.eval import main as eval_main
from app.evaluation.task_list import MEASURED
from app.render.report import write_json_atomic
from app.tasks import MANIPULATION

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench_tasks")


def evaluate(config: str, policy: str, episodes: int, out: Path) -> dict:
    """app.eval's aggregated figures of ``policy`` over ``episodes`` episodes seeded 0.. of ``config``."""
    code = eval_main([str(ROOT / config), "--policy", policy, "--episodes", str(episodes), "--out", str(out)])
    if code != 0:
        raise SystemExit(f"app.eval {config} --policy {policy} exited {code}")
    info = json.loads((out / "eval_info.json").read_text())
    return info["aggregated"] | {"reasons": [e["reason"] for e in info["per_episode"] if not e["success"]]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--tasks", default=",".join(MANIPULATION), help="comma-separated task types")
    parser.add_argument("--no-random", dest="random", action="store_false")
    parser.add_argument("--no-write", dest="write", action="store_false", help=f"leave {MEASURED.name} as it is")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    found, bad = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.tasks.split(","):
            cls = MANIPULATION[name]
            expert = evaluate(cls.config, "expert", args.episodes, Path(tmp) / f"{name}_expert")
            line = (f"{name:14s} expert {expert['n_success']}/{expert['n_episodes']} "
                    f"({expert['pc_success_ci95'][0]:.1f}-{expert['pc_success_ci95'][1]:.1f} %) "
                    f"failures {expert['failure_reasons']}")
            found[name] = {"successes": expert["n_success"], "episodes": expert["n_episodes"],
                           "interval": [x / 100 for x in expert["pc_success_ci95"]],
                           "failures": expert["failure_reasons"],
                           "command": f"python scripts/bench_tasks.py --episodes {args.episodes} --tasks {name}",
                           "date": datetime.now(timezone.utc).strftime("%Y-%m-%d")}
            if args.random:
                rand = evaluate(cls.config, "random", args.episodes, Path(tmp) / f"{name}_random")
                line += f"; random {rand['n_success']}/{rand['n_episodes']} failures {rand['failure_reasons']}"
                if rand["n_success"] or not all(rand["reasons"]):
                    bad.append(f"{name}: the random policy succeeded or failed without a reason")
            if not all(expert["reasons"]):
                bad.append(f"{name}: an expert failure without a reason")
            print(line, flush=True)
    if args.write:  # read again now: another run of this script may have written other tasks meanwhile
        kept = json.loads(MEASURED.read_text()) if MEASURED.is_file() else {}
        write_json_atomic(MEASURED, kept | found)
        print(f"wrote {MEASURED.relative_to(ROOT)}")
    for b in bad:
        print("ERROR:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
