"""python -m app.plan: a batch of planning problems from a file, its outputs, its errors (exit 2, one line naming
the file and key, nothing written), and the same answers on Ray workers."""

import json
import re

import numpy as np
import pytest

from app.plan import main
from tests.conftest import ROOT

PROBLEMS = ROOT / "configs" / "planning" / "shelf_problems.yaml"


def _plans(out):
    return json.loads((out / "plans.json").read_text())


def test_plans_every_problem_and_says_why_the_others_failed(tmp_path, caplog):
    """The example file: three problems planned (a joint goal across the panel, a pose, a position), one with no
    collision-free IK goal and one whose goal is in the table; paths.npz holds each path and timed trajectory,
    starting at the start and ending at rest; the clearance along each path keeps the min_distance. Every failure
    the console shows names its problem (a bare "planning failed: no_ik_goal" named none)."""
    out = tmp_path / "out"
    caplog.set_level("INFO")
    assert main([str(PROBLEMS), "--out", str(out)]) == 0
    said = [r.getMessage() for r in caplog.records if r.levelname == "INFO" and "no_ik_goal" in r.getMessage()]
    assert said and all("goal_inside_the_shelf" in line for line in said), said
    report = _plans(out)
    reasons = {p["name"]: p["reason"] for p in report["plans"]}
    assert reasons == {"joints_across": "success", "pose_across_down": "success", "position_only": "success",
                       "goal_inside_the_shelf": "no_ik_goal", "joints_into_the_table": "goal_in_collision"}
    assert report["summary"]["planned"] == 3 and report["summary"]["failed"] == {
        "no_ik_goal": ["goal_inside_the_shelf"], "goal_in_collision": ["joints_into_the_table"]}
    with np.load(out / "paths.npz") as arrays:
        start = np.array([-0.5, 1.5, 0.9, -0.4, 0.0, 0.0, 0.044, 0.044])
        np.testing.assert_allclose(arrays["path_0"][0], start)
        np.testing.assert_allclose(arrays["trajectory_0"][0], start)
        np.testing.assert_allclose(arrays["trajectory_0"][-1], arrays["path_0"][-1])
        assert arrays["path_3"].shape == (0, 8)
    for p in report["plans"][:3]:
        assert p["clearance_world_min_m"] >= 0.02 - 1e-9 and p["planning_s"] > 0 and p["path_length_rad"] > 0
    assert report["plans"][0]["path_length_rad"] > 1.0 + 1e-6  # around the panel: longer than the straight 1 rad


@pytest.mark.parametrize("edit, message", [
    (("  - name: joints_across", "  - name: joints_across\n    goals: [0]"), r"problems\[0\]: unknown key 'goals'"),
    (("options: {planner: RRTConnect,", "options: {planner: RRTconnect,"), r"options: .*RRTconnect"),
    (("options: {", "options: {timout: 1, "), r"options: unknown key 'timout'; did you mean 'timeout'"),
    (("rate: 200", "rate: fast"), r"rate: expected a number"),
    (("link: ee_gripper_link, pos: [0.3, -0.15", "link: ee_link, pos: [0.3, -0.15"), r"ee_link"),
])
def test_a_bad_file_exits_2_with_the_file_and_key_and_writes_nothing(tmp_path, capsys, edit, message):
    text = PROBLEMS.read_text().replace("../../assets", str(ROOT / "assets"))
    assert edit[0] in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(edit[0], edit[1], 1))
    out = tmp_path / "out"
    assert main([str(bad), "--out", str(out)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: ") and re.search(message, last), last
    assert not (out / "plans.json").exists() and not (out / "paths.npz").exists()


@pytest.mark.parametrize("content, message", [
    (bytes(range(256)), r"bad\.yaml: not UTF-8 text \(byte 128: invalid start byte\)"),
    (b"[" * 2000, r"bad\.yaml: (nested too deeply|cannot read it as YAML)"),
], ids=["binary", "nested 2000 deep"])
def test_a_file_that_is_not_yaml_text_exits_2_with_one_line(tmp_path, capsys, content, message):
    """A binary problems file ended app.plan with a UnicodeDecodeError traceback."""
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(content)
    assert main([str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert re.search(message, err[-1]) and "Traceback" not in "\n".join(err), err[-3:]


def test_two_ray_workers_give_the_plans_of_one_process(tmp_path, shared_ray):
    """Every problem has its own seed (OMPL reseeded per search): the same paths on 2 workers as here."""
    assert main([str(PROBLEMS), "--out", str(tmp_path / "a")]) == 0
    assert main([str(PROBLEMS), "--workers", "2", "--out", str(tmp_path / "b")]) == 0
    with np.load(tmp_path / "a" / "paths.npz") as a, np.load(tmp_path / "b" / "paths.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            np.testing.assert_array_equal(a[name], b[name])
    strip = lambda r: [{k: v for k, v in p.items() if k != "planning_s"} for p in r["plans"]]
    assert strip(_plans(tmp_path / "a")) == strip(_plans(tmp_path / "b"))
