"""A task is one module: a file outside the package, named in YAML as ``module:Class``, runs through app.run,
app.record and app.eval, and its ``evaluate`` is the one judgement all three report."""

from __future__ import annotations

import json

import pytest

from app.eval import main as eval_main
from app.record import main as record_main
from app.run import main as run_main
from app.tasks import MANIPULATION, TASK_TYPES
from tests.conftest import ROOT

TASK_MODULE = '''
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.tasks import register_task
from app.tasks.pick_place import PickPlaceTask


@register_task
@dataclass(frozen=True)
class NeverPlacedTask(PickPlaceTask):
    """A pick-and-place whose evaluate never says success, and says why in its own word."""

    type: ClassVar[str] = "never_placed"
    reasons: ClassVar[tuple[str, ...]] = ("judged_by_test",)

    def evaluate(self, state):
        judged = super().evaluate(state)
        n = len(judged.success)
        return judged._replace(success=np.zeros(n, bool), reason=["judged_by_test"] * n)
'''

RUN = f"""scene: {ROOT / 'scenes/pick_place.yaml'}
n_envs: 1
duration: 0.4
task:
  type: ext_task_module:NeverPlacedTask
  object: cube
  place_pos: [0.3, 0.1]
video: {{enabled: false}}
"""


@pytest.fixture
def task_file(tmp_path, monkeypatch):
    """The task module in a folder of its own on sys.path, and the run file naming it; the registry restored."""
    folder = tmp_path / "user_tasks"
    folder.mkdir()
    (folder / "ext_task_module.py").write_text(TASK_MODULE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(__import__("sys").modules, "ext_task_module", raising=False)
    before = dict(TASK_TYPES), dict(MANIPULATION)
    config = tmp_path / "never_placed.yaml"
    config.write_text(RUN)
    yield config
    for registry, kept in zip((TASK_TYPES, MANIPULATION), before):
        registry.clear()
        registry.update(kept)


def test_a_task_in_one_file_outside_the_package_is_judged_by_its_evaluate_in_run_record_and_eval(task_file, tmp_path):
    assert run_main([str(task_file), "--out", str(tmp_path / "run"), "--no-video"]) == 0
    assert "never_placed" in TASK_TYPES  # registered by importing the file the YAML names
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    (env,) = report["environments"]
    assert not env["episode"]["success"] and env["episode"]["reason"] == "judged_by_test"
    assert report["summary"]["failed"] == {"judged_by_test": [0]}

    assert record_main([str(task_file), "--cameras", "none", "--episodes", "1", "--keep-failed",
                        "--out", str(tmp_path / "ds")]) == 0
    tasks = (tmp_path / "ds" / "meta" / "tasks.parquet")
    import pyarrow.parquet as pq

    assert any("[failed: judged_by_test]" in str(t) for t in pq.read_table(tasks).to_pylist()), \
        pq.read_table(tasks).to_pylist()

    assert eval_main([str(task_file), "--policy", "expert", "--episodes", "1", "--out", str(tmp_path / "ev")]) == 0
    info = json.loads((tmp_path / "ev" / "eval_info.json").read_text())
    assert [e["reason"] for e in info["per_episode"]] == ["judged_by_test"]
    assert info["aggregated"]["pc_success"] == 0.0


def test_a_task_type_naming_a_module_that_is_not_there_is_one_line_naming_the_key(tmp_path, capsys):
    config = tmp_path / "missing.yaml"
    config.write_text(RUN.replace("ext_task_module:NeverPlacedTask", "no_such_module_here:Task"))
    assert run_main([str(config), "--out", str(tmp_path / "run"), "--no-video"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "task.type" in last and "no_such_module_here" in last and "missing.yaml" in last
    assert not (tmp_path / "run").exists()
