"""The README's Python examples run as written."""

import os
import re

from tests.conftest import ROOT


def test_readme_python_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    exec(compile("\n".join(blocks), "README.md", "exec"), namespace)  # noqa: S102 - our own docs
    assert namespace["q_all"].shape == (8, 6) and namespace["J"].shape == (16, 6, 8)
    namespace["scene"].close()
    assert os.getcwd() == str(ROOT)
