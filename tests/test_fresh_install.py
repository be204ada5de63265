"""The quickstart's first command on a fresh virtual environment: ``pip install -e .`` (the README's install, no
extra) and then every config shipped under configs/ runs in it, briefly and headless, through ``app.run``'s own
command line. Three shipped configs needed the ``plan`` extra after the quickstart before OMPL and Ruckig became
core dependencies. Slow (a venv and an install from pip's cache, ~1-2 minutes), in CI."""

from __future__ import annotations

import subprocess
import sys
import venv

import pytest

from tests.conftest import ROOT

RUN_ALL = r"""
import sys, tempfile
from pathlib import Path
from app.run import main
failed = []
for path in sorted(Path("configs").glob("*.yaml")):
    with tempfile.TemporaryDirectory() as out:
        code = main([str(path), "--no-video", "--duration", "0.05", "--n-envs", "1", "--out", out])
    print(path.name, code, flush=True)
    if code != 0:
        failed.append(path.name)
sys.exit(f"failed: {failed}" if failed else 0)
"""


@pytest.mark.slow
def test_every_shipped_config_runs_in_a_fresh_venv_after_the_quickstart_install(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "-e", str(ROOT)],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    done = subprocess.run([str(python), "-c", RUN_ALL], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    ran = [line.split()[0] for line in done.stdout.splitlines() if line.endswith(" 0")]
    assert sorted(ran) == sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
