"""The README's Python examples run as written, each block on its own (a fresh namespace per block, as a
reader who copies one would run it)."""

import os
import re

from tests.conftest import ROOT


def test_each_readme_python_block_runs_on_its_own(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 2
    spaces = []
    for i, block in enumerate(blocks):
        namespace: dict = {}
        exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)  # noqa: S102 - our own docs
        spaces.append(namespace)
    assert spaces[0]["q_all"].shape == (8, 6)
    assert spaces[1]["J"].shape == (16, 6, 8)
    spaces[1]["scene"].close()
    assert os.getcwd() == str(ROOT)
