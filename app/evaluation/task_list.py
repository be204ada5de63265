"""``python -m app.eval --list-tasks``: every registered object task (app.tasks), the robots it needs, its run
file and its scripted expert's success as last measured by ``scripts/bench_tasks.py`` (kept in
``app/tasks/expert_success.json``; "not measured" where that benchmark has not run it)."""

from __future__ import annotations

import json
from pathlib import Path

from app.errors import InputError
from app.tasks import MANIPULATION

MEASURED = Path(__file__).resolve().parents[1] / "tasks" / "expert_success.json"


def measured(path: Path = MEASURED) -> dict:
    """Task type -> {successes, episodes, interval: [lo, hi] (95 %, Wilson), command, date}; {} without a file."""
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not the benchmark's JSON ({exc}); run scripts/bench_tasks.py again") from None


def task_rows(path: Path = MEASURED) -> list[dict]:
    """One row per registered object task, one-arm tasks first, by name: task, class, robots, config, expert."""
    found = measured(path)
    rows = []
    for name, cls in sorted(MANIPULATION.items(), key=lambda item: (item[1].n_arms, item[0])):
        m = found.get(name)
        expert = "not measured" if m is None else (
            f"{m['successes']}/{m['episodes']} ({100 * m['interval'][0]:.1f}-{100 * m['interval'][1]:.1f} %)")
        rows.append({"task": name, "class": cls.__name__, "robots": cls.robots, "config": cls.config or "-",
                     "expert": expert})
    return rows


def task_table(rows: list[dict]) -> str:
    """The rows as aligned text columns under a header."""
    keys = ("task", "robots", "config", "expert")
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    lines = ["  ".join(k.ljust(widths[k]) for k in keys)]
    lines += ["  ".join(str(r[k]).ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(line.rstrip() for line in lines)
