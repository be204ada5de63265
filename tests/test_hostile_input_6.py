"""Hostile input, round six (reliability round four): what a sweep of 206 bad command lines still got wrong. An
empty config ran the defaults; a refused app.eval or app.track left an empty --out folder; a folder given for a
config was "file not found"; a typo in scene_overrides was blamed on the scene file; app.solve solved before
finding it could not write --out; some errors named neither the file nor the option."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from app.config.loader import load_run_config
from app.errors import ConfigError
from tests.conftest import ROOT


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=ROOT, env=env, check=False,
                          timeout=120)


def _last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stderr.strip().splitlines()[-1]


def test_an_empty_run_config_is_refused_not_run_with_defaults(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match=r"empty\.yaml: empty; a run config names at least its scene and task"):
        load_run_config(empty)


def test_a_folder_given_as_the_config_says_so(tmp_path):
    folder = tmp_path / "adir.yaml"
    folder.mkdir()
    with pytest.raises(ConfigError, match=r"adir\.yaml: a folder, not a YAML file"):
        load_run_config(folder)


@pytest.mark.parametrize("overrides, words", [
    ("scene_overrides:\n  tabel: {}\n", r"run\.yaml: scene_overrides: unknown key 'tabel'; did you mean 'table'"),
    ("scene_overrides:\n  robot:\n    tipo: 3\n", r"run\.yaml: scene_overrides\.robot: unknown key 'tipo'"),
], ids=["top level", "nested"])
def test_an_unknown_key_in_scene_overrides_is_the_run_files_not_the_scenes(tmp_path, overrides, words):
    text = (ROOT / "configs" / "single_ik.yaml").read_text().replace("scene: scenes/", f"scene: {ROOT}/scenes/")
    run = tmp_path / "run.yaml"
    run.write_text(text + overrides)
    with pytest.raises(ConfigError, match=words):
        load_run_config(run)


@pytest.mark.parametrize("args, words", [
    (["app.eval", "configs/pick_place.yaml", "--policy", "random", "--episodes", "1", "--fps", "0"],
     "fps must be a whole number"),
    (["app.eval", "configs/pick_place.yaml", "--policy", "nope:nope", "--episodes", "1"],
     "--policy 'nope:nope': cannot load it"),
    (["app.eval", "configs/single_ik.yaml", "--policy", "expert", "--episodes", "1"],
     r"the robot of single_ik \(scene scenes/table\.yaml\) has no gripper.*--action-mode joint"),
], ids=["eval fps 0", "eval unknown policy", "eval ee_pose without a gripper"])
def test_a_refused_evaluation_leaves_no_output_folder_and_names_what_was_wrong(tmp_path, args, words):
    out = tmp_path / "new" / "out"
    proc = _cli(*args, "--out", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert re.search(words, _last_line(proc)), _last_line(proc)
    assert not (tmp_path / "new").exists()


def test_a_refused_track_leaves_no_output_folder(tmp_path):
    csv = tmp_path / "traj.csv"
    csv.write_text("t,x,y,z,qw,qx,qy,qz\n0,0.3,0,0.2,0,1,0,0\n1,0.3,0.05,0.2,0,1,0,0\n")
    out = tmp_path / "out"
    proc = _cli("app.track", str(csv), "--config", "configs/single_ik.yaml", "--rate", "0", "--out", str(out))
    assert proc.returncode == 2 and _last_line(proc) == "error: --rate must be in [1, 10000] Hz, got 0"
    assert not out.exists()


@pytest.mark.parametrize("out, words", [("folder.npz", r"--out .*folder\.npz: a folder; give the \.npz file"),
                                        ("/proc/app_test.npz", r"--out /proc/app_test\.npz: cannot write into /proc")],
                         ids=["a folder", "under /proc"])
def test_solve_refuses_an_unwritable_out_before_solving(tmp_path, out, words):
    import numpy as np

    targets = tmp_path / "targets.npz"
    np.savez(targets, pos=np.array([[0.3, 0.0, 0.2]]), quat=np.array([[0.0, 1.0, 0.0, 0.0]]))
    (tmp_path / "folder.npz").mkdir()
    path = out if out.startswith("/") else str(tmp_path / out)
    proc = _cli("app.solve", str(targets), "--urdf", "assets/urdf/widowx_ai.urdf", "--link", "ee_gripper_link",
                "--out", path)
    assert proc.returncode == 2 and re.search(words, _last_line(proc)), proc.stderr[-300:]
    assert "solving" not in proc.stderr  # refused before any target was solved


def test_solve_names_the_option_and_urdf_of_an_unknown_link(tmp_path):
    import numpy as np

    targets = tmp_path / "targets.npz"
    np.savez(targets, pos=np.array([[0.3, 0.0, 0.2]]), quat=np.array([[0.0, 1.0, 0.0, 0.0]]))
    proc = _cli("app.solve", str(targets), "--urdf", "assets/urdf/widowx_ai.urdf", "--link", "nolink", "--out",
                str(tmp_path / "q.npz"))
    assert proc.returncode == 2
    assert _last_line(proc).startswith("error: --link 'nolink' in ") and "widowx_ai.urdf: unknown link" in \
        _last_line(proc)


def test_the_drivers_output_folder_variable_is_named_in_its_error(tmp_path):
    import os

    script = tmp_path / "demo.py"
    script.write_text("import app.trossen_arm as trossen_arm\nd = trossen_arm.TrossenArmDriver()\n"
                      "d.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "
                      "'127.0.0.2', False)\n")
    env = dict(os.environ, APP_TROSSEN_TIME_SCALE="0", APP_TROSSEN_OUTPUTS="/proc/app_test_outputs")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, env=env, check=False,
                          timeout=120)
    assert proc.returncode == 1
    assert "DriverRuntimeError: APP_TROSSEN_OUTPUTS=/proc/app_test_outputs: cannot create or write this folder" \
        in proc.stderr
