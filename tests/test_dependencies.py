"""Every config shipped under configs/ runs on what ``pip install -e .`` installs (the quickstart's first
command): the third-party distributions a short run of each imports are all core dependencies of the app (or
theirs), none from an extra. Before OMPL and Ruckig became core, pick_shelf, handover_wall and plan_shelf needed
the ``plan`` extra and exited with "motion planning needs OMPL" after the quickstart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata

import pytest

from tests.conftest import ROOT

PROBE = r"""
import sys
at_start = set(sys.modules)  # the interpreter's own start (site hooks of this machine), not the app's
import json
from importlib import metadata
from pathlib import Path
from app.config.loader import load_run_config
from tests.golden_runs import run_to_end
for path in sorted(Path("configs").glob("*.yaml")):
    run_to_end(load_run_config(path, duration=0.05, n_envs=1))
tops = {m.split(".")[0] for m in set(sys.modules) - at_start}
dists = metadata.packages_distributions()
print(json.dumps(sorted({d for t in tops for d in dists.get(t, [])})))
"""


OPTIONAL = {"charset-normalizer": "numpy.f2py.crackfortran imports it where present and works without it"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _closure(extras: bool) -> set[str]:
    """The app's requirements (core, or core and every extra's) and theirs, by distribution name."""
    seen, todo = set(), [_name(r) for r in metadata.requires("app") or [] if extras or "extra ==" not in r]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [_name(r) for r in metadata.requires(name) or [] if "extra ==" not in r]
        except metadata.PackageNotFoundError:
            pass
    return seen


@pytest.mark.slow
def test_every_shipped_config_runs_on_the_core_dependencies_alone():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    used = {_name(d) for d in json.loads(done.stdout.strip().splitlines()[-1])}
    extras_only = _closure(extras=True) - _closure(extras=False)
    assert {"pytest", "hypothesis"} <= extras_only  # the test extra's own: the closures are read
    outside = sorted(used & extras_only - {"pytest", "pluggy", "iniconfig"} - set(OPTIONAL))  # the probe: tests.*
    assert not outside, f"shipped configs import {outside}, which only an extra installs, not `pip install -e .`"


def test_ompl_and_ruckig_are_core_dependencies_and_the_plan_extra_still_installs():
    core = {_name(r) for r in metadata.requires("app") if "extra ==" not in r}
    assert {"ompl", "ruckig"} <= core
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^plan = \[", text, re.M), "pip install -e '.[plan]' (older instructions) must keep working"
