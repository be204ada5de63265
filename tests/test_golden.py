"""Regression: the final poses of short runs of every shipped config equal the committed goldens
(tests.golden_runs.tolerances: 1e-6 on the goldens' machine; a whole pick episode elsewhere, where contacts grow
last-bit differences, within OTHER_MACHINE_TOLERANCE). Regenerate deliberately with scripts/regen_golden.py."""

import json

import pytest

from tests.conftest import ROOT
from tests.golden_runs import compare, final_poses

CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_final_poses_match_golden(config):
    golden_path = ROOT / "tests" / "golden" / f"{config.stem}.json"
    assert golden_path.is_file(), f"no golden for {config.name}: run scripts/regen_golden.py after review"
    problems = compare(final_poses(config), json.loads(golden_path.read_text()))
    assert not problems, f"{config.name} changed: {problems}; review, then python scripts/regen_golden.py"


def test_compare_flags_a_changed_joint():
    golden = {"q_final": [[0.0, 1.0]], "links_pos": [[[0.0, 0.0, 0.0]]], "links_quat_wxyz": [[[1.0, 0, 0, 0]]]}
    changed = {**golden, "q_final": [[0.0, 1.0 + 1e-4]]}
    assert compare(golden, golden) == []
    assert "q_final" in compare(changed, golden)[0]


def test_compare_allows_objects_a_tenth_of_a_millimetre_and_no_more():
    golden = {"q_final": [[0.0]], "links_pos": [[[0.0, 0.0, 0.0]]], "links_quat_wxyz": [[[1.0, 0, 0, 0]]],
              "objects_final_pos": [[[0.3, 0.1, 0.025]]]}
    settled = {**golden, "objects_final_pos": [[[0.3 + 5e-5, 0.1, 0.025]]]}
    moved = {**golden, "objects_final_pos": [[[0.3 + 5e-4, 0.1, 0.025]]]}
    assert compare(settled, golden) == []
    assert "objects_final_pos" in compare(moved, golden)[0]


def test_a_whole_pick_episode_from_another_machine_is_compared_at_the_other_machine_tolerance():
    golden = {"machine": "x86_64 znver4 avx512f", "whole_episode": True, "q_final": [[0.0, 1.0]],
              "links_pos": [[[0.0, 0.0, 0.0]]], "links_quat_wxyz": [[[1.0, 0, 0, 0]]],
              "objects_final_pos": [[[0.3, 0.1, 0.025]]], "success": [True]}
    drifted = {**golden, "q_final": [[0.0, 1.0 + 3e-4]], "objects_final_pos": [[[0.3 + 1e-3, 0.1, 0.025]]]}
    elsewhere = {**drifted, "machine": "x86_64 znver3 avx2"}
    assert compare(drifted, golden)  # the same machine: held to 1e-6 rad and 0.1 mm
    assert compare(elsewhere, golden) == []
    assert "success" in compare({**elsewhere, "success": [False]}, golden)[0]  # the outcome itself never drifts
    moved = {**elsewhere, "q_final": [[0.0, 1.0 + 5e-3]]}
    problems = compare(moved, golden)
    assert "q_final" in problems[0] and "znver4" in problems[-1]
    not_whole = {**golden, "whole_episode": False}
    assert compare({**elsewhere, "whole_episode": False}, not_whole)  # a short run agrees to 1e-6 anywhere
