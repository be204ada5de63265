"""The README's command examples run as written (scaling out: a sharded run, a sweep, targets for app.solve and
app.solve itself), from a folder holding the project's configs, scenes, assets and scripts."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT


def _scale_out_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Scaling out (Ray)"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_scale_out_examples_run_as_written(tmp_path, shared_ray):
    """The commands join this test process's Ray (RAY_ADDRESS, as on a cluster) instead of each starting one: a
    local Ray's start and end on their own are tested in tests/test_scale.py and tests/test_console.py."""
    address = shared_ray.get_runtime_context().gcs_address
    for name in ("configs", "scenes", "assets", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name)
    commands = _scale_out_commands()
    assert [c.split()[2] if c.startswith("python -m") else c.split()[1] for c in commands] == \
        ["app.run", "app.sweep", "scripts/make_targets.py", "app.solve"]
    for command in commands:
        args = shlex.split(command)
        res = subprocess.run([sys.executable, *args[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                             env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": address})
        assert res.returncode == 0, f"{command}\n{res.stderr[-2000:]}"
    import json

    qp = json.loads((tmp_path / "runs" / "qp8" / "report.json").read_text())["summary"]
    assert qp["reached"] == 0 and qp["min_obstacle_distance_m"] >= qp["d_safe_m"] - 1e-4  # what the text says of it
    sweep = json.loads((tmp_path / "sweeps" / "s1" / "summary.json").read_text())
    assert sweep["all"]["success_rate"] == 1.0
    out = np.load(tmp_path / "q.npz")
    assert out["q"].shape == (2000, 8) and out["converged"].mean() > 0.99


def test_every_output_the_readmes_commands_write_is_ignored_by_git():
    """What a user makes by following the README (``--out X`` of its commands) never shows up in ``git status``."""
    import shutil

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to ignore")
    outs = sorted(set(re.findall(r"--out ([\w./-]+)", (ROOT / "README.md").read_text())) - {"DIR"})
    assert len(outs) >= 5, outs  # the check sees the README's commands
    probe = [o.rstrip("/") + ("/x" if "." not in Path(o).name else "") for o in outs]
    res = subprocess.run(["git", "check-ignore", "--no-index", *probe], cwd=ROOT, capture_output=True, text=True)
    ignored = set(res.stdout.split())
    assert set(probe) <= ignored, f"not ignored by .gitignore: {sorted(set(probe) - ignored)}"


def test_readme_tracking_example_runs_as_written_and_reports_what_it_says(tmp_path):
    """The README's app.track example has its input made by the line before it, and ends in the stretches the
    text describes: one unreachable stretch, then catching up."""
    import json

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Tracking end-effector trajectories"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    assert [c.split()[1] for c in commands] == ["scripts/make_trajectory.py", "-m"]
    for name in ("configs", "scenes", "assets", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name)
    for command in commands:
        res = subprocess.run([sys.executable, *shlex.split(command)[1:]], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
        assert res.returncode == 0, f"{command}\n{res.stderr[-2000:]}"
    report = json.loads((tmp_path / "runs" / "track" / "policy" / "track.json").read_text())
    causes = [s["cause"] for s in report["stretches"]]
    assert causes.count("unreachable") == 1 and set(causes) <= {"unreachable", "velocity_bound"}, causes
