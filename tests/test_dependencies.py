"""OMPL and Ruckig are core dependencies: before, pick_shelf, handover_wall and plan_shelf needed the ``plan``
extra and exited with "motion planning needs OMPL" after the quickstart's install (every config in a fresh venv:
tests/test_fresh_install.py)."""

from __future__ import annotations

import re
from importlib import metadata

from tests.conftest import ROOT


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_ompl_and_ruckig_are_core_dependencies_and_the_plan_extra_still_installs():
    core = {_name(r) for r in metadata.requires("app") if "extra ==" not in r}
    assert {"ompl", "ruckig"} <= core
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^plan = \[", text, re.M), "pip install -e '.[plan]' (older instructions) must keep working"
