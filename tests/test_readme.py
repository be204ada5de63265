"""The README runs as written.

- Every ```python block runs in a fresh interpreter (a child process, 120 s at most), from a temporary folder that
  holds links to the repository's configs, scenes, assets, scripts and tests, with the repository on PYTHONPATH:
  the paths a block names are the repository's, and whatever a block writes lands in the temporary folder. A block
  is skipped where the line just before its fence says so: ``<!-- readme-test: skip (REASON) -->`` always,
  ``<!-- readme-test: needs MODULE[, MODULE] -->`` where one of those modules is not installed.
- The ```bash blocks' ``python -m app.X`` lines are not run one by one (each command has tests of its own), but the
  scale-out block and the tracking example are run as written and end in what the text says of them.
- What the README's commands write (``--out X``) is ignored by git; the contents links go to headings, and the
  links to files go to files; the README is a manual (at most 300 lines; no dates, commit hashes or issue numbers).
"""

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
LINKED = ("configs", "scenes", "assets", "scripts", "tests")  # what the README's examples name, relative to the root
MARKER = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->")
BLOCK_TIMEOUT_S = 120
LEARN_PLACEHOLDER = "<!-- learn section: filled in by the other engineer -->"


class Block(NamedTuple):
    heading: str
    index: int  # the block's number among its section's python blocks, from 0
    code: str
    marker: str | None  # what the readme-test comment before the fence says, if there is one

    @property
    def id(self) -> str:
        return f"{slug(self.heading)}-{self.index}"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = heading.strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _text() -> str:
    return README.read_text(encoding="utf-8")


def python_blocks(text: str) -> list[Block]:
    """Every ```python block of the README, with the heading it is under and its marker comment."""
    blocks, heading, counts = [], "top", {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#") and not line.startswith("#!"):
            heading = line.lstrip("#").strip()
        elif line.strip().startswith("```"):
            fence_lang = line.strip()[3:].strip()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            if fence_lang == "python":
                found = MARKER.search(lines[i - 1]) if i > 0 else None
                index = counts.get(heading, 0)
                counts[heading] = index + 1
                blocks.append(Block(heading, index, "\n".join(lines[i + 1:end]) + "\n",
                                    found.group(1) if found else None))
            i = end
        i += 1
    return blocks


def _linked_folder(tmp_path: Path) -> Path:
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg", **extra}
    env.pop("DISPLAY", None)  # a block that needs a display says so with its marker
    return env


BLOCKS = python_blocks(_text())


def _skip_reason(marker: str | None) -> str | None:
    if marker is None:
        return None
    if m := re.fullmatch(r"skip\s*\((.+)\)", marker):
        return m.group(1)
    if m := re.fullmatch(r"needs\s+(.+)", marker):
        missing = [name.strip() for name in m.group(1).split(",")
                   if importlib.util.find_spec(name.strip()) is None]
        return f"needs {', '.join(missing)}, which is not installed" if missing else None
    raise AssertionError(f"readme-test marker {marker!r}: write 'skip (REASON)' or 'needs MODULE[, MODULE]'")


def test_the_readme_has_python_examples_and_each_has_its_own_id():
    assert len(BLOCKS) >= 6
    ids = [b.id for b in BLOCKS]
    assert len(set(ids)) == len(ids), ids


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_python_example_runs_as_written(block: Block, tmp_path):
    reason = _skip_reason(block.marker)
    if reason:
        pytest.skip(reason)
    cwd = _linked_folder(tmp_path)
    try:
        res = subprocess.run([sys.executable, "-c", block.code], cwd=cwd, capture_output=True, text=True,
                             timeout=BLOCK_TIMEOUT_S, env=_env())
    except subprocess.TimeoutExpired:
        pytest.fail(f"the example under '{block.heading}' ran over {BLOCK_TIMEOUT_S} s")
    assert res.returncode == 0, f"the example under '{block.heading}' failed:\n{block.code}\n{res.stderr[-3000:]}"


def test_the_readme_examples_pin_down_what_the_text_says():
    """The blocks print what their comments and the Conventions section claim (a top-down grasp reached, the
    observation shapes); the claims themselves are checked here without the printing."""
    from app import RobotModel

    model = RobotModel.from_urdf(str(ROOT / "assets/urdf/widowx_ai.urdf"))
    names = list(model.link_names)
    info = model.inverse_kinematics("ee_gripper_link", pos=[0.3, 0.0, 0.1], quat=[0.7071068, 0, 0.7071068, 0],
                                    return_info=True)
    assert bool(np.all(info.converged))
    pos, quat = model.forward_kinematics(info.q)
    wrist, ee = pos[names.index("link_6")], pos[names.index("ee_gripper_link")]
    # the approach axis (x) points down: the wrist straight above the end effector
    assert np.allclose(wrist[:2], ee[:2], atol=1e-6) and wrist[2] - ee[2] > 0.1
    # and x is the approach axis: from the wrist towards the fingertips, in ee_gripper_link's frame
    w, x, y, z = quat[names.index("ee_gripper_link")]
    rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    assert np.allclose(rot[:, 0], [0.0, 0.0, -1.0], atol=1e-6)


def _bash_commands(section: str) -> list[str]:
    """The command lines of the first ```bash block under the heading ``section`` (comments dropped)."""
    text = _text()
    start = text.index(section)
    block = re.search(r"```bash\n(.*?)```", text[start:], re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_scale_out_examples_run_as_written(tmp_path, shared_ray):
    """The commands join this test process's Ray (RAY_ADDRESS, as on a cluster) instead of each starting one: a
    local Ray's start and end on their own are tested in tests/test_scale.py and tests/test_console.py."""
    address = shared_ray.get_runtime_context().gcs_address
    cwd = _linked_folder(tmp_path)
    commands = _bash_commands("## Scaling out (Ray)")
    assert [c.split()[2] if c.startswith("python -m") else c.split()[1] for c in commands] == \
        ["app.run", "app.sweep", "scripts/make_targets.py", "app.solve"]
    for command in commands:
        args = shlex.split(command)
        res = subprocess.run([sys.executable, *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=300,
                             env=_env(RAY_ADDRESS=address))
        assert res.returncode == 0, f"{command}\n{res.stderr[-2000:]}"
    qp = json.loads((cwd / "runs" / "qp8" / "report.json").read_text())["summary"]
    assert qp["reached"] == 0 and qp["min_obstacle_distance_m"] >= qp["d_safe_m"] - 1e-4  # what the text says of it
    sweep = json.loads((cwd / "sweeps" / "s1" / "summary.json").read_text())
    assert sweep["all"]["success_rate"] == 1.0
    out = np.load(cwd / "q.npz")
    assert out["q"].shape == (2000, 8) and out["converged"].mean() > 0.99


def test_readme_tracking_example_runs_as_written_and_reports_what_it_says(tmp_path):
    """The README's app.track example has its input made by the line before it, and ends in the stretches the
    text describes: one unreachable stretch, then catching up."""
    lines = [line for line in _bash_commands("## Datasets")
             if line.startswith(("python scripts/make_trajectory.py", "python -m app.track"))]
    assert [c.split()[1] for c in lines] == ["scripts/make_trajectory.py", "-m"], lines
    cwd = _linked_folder(tmp_path)
    for command in lines:
        res = subprocess.run([sys.executable, *shlex.split(command)[1:]], cwd=cwd, capture_output=True, text=True,
                             timeout=300, env=_env())
        assert res.returncode == 0, f"{command}\n{res.stderr[-2000:]}"
    report = json.loads((cwd / "runs" / "track" / "policy" / "track.json").read_text())
    causes = [s["cause"] for s in report["stretches"]]
    assert causes.count("unreachable") == 1 and set(causes) <= {"unreachable", "velocity_bound"}, causes


def test_every_output_the_readmes_commands_write_is_ignored_by_git():
    """What a user makes by following the README (``--out X`` of its commands) never shows up in ``git status``."""
    import shutil

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to ignore")
    outs = sorted(set(re.findall(r"--out ([\w./-]+)", _text())) - {"DIR"})
    assert len(outs) >= 5, outs  # the check sees the README's commands
    probe = [o.rstrip("/") + ("/x" if "." not in Path(o).name else "") for o in outs]
    res = subprocess.run(["git", "check-ignore", "--no-index", *probe], cwd=ROOT, capture_output=True, text=True)
    ignored = set(res.stdout.split())
    assert set(probe) <= ignored, f"not ignored by .gitignore: {sorted(set(probe) - ignored)}"


def test_the_readme_is_a_manual_not_a_log():
    text = _text()
    assert len(text.splitlines()) <= 300, "the README is at most 300 lines: details go to docs/"
    assert not re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text), "dates belong in docs/benchmarks.md"
    assert not re.findall(r"(?<![\w&])#\d+\b", text), "issue numbers belong in docs/benchmarks.md"
    hashes = [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search(r"[a-f]", h) and re.search(r"\d", h)]
    assert not hashes, f"commit hashes belong in docs/benchmarks.md: {hashes}"
    for command in ('pip install -e . && python -m app.run configs/batched_ik.yaml',
                    'pip install -e ".[test]" && python -m pytest'):
        assert f"\n{command}\n" in text, f"the quickstart command CI runs is gone: {command}"


def test_the_contents_go_to_headings_and_the_links_to_files():
    text = _text()
    anchors = {slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert targets
    learn = text[text.index("## Learning from demonstrations"):].split("\n## ", 1)[0]
    for target in targets:
        if target.startswith("#"):
            assert target[1:] in anchors, f"contents link {target} goes to no heading"
        elif "://" not in target:
            path = ROOT / target.split("#")[0]
            if not path.exists() and LEARN_PLACEHOLDER in learn and f"]({target})" in learn:
                continue  # the learning section's page comes with that section
            assert path.exists(), f"the README links to {target}, which does not exist"
