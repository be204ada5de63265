"""The two namings of the Trossen layout (#38 item 6): the kits' ``main_joint_*`` / ``left_joint_*`` and the current
Trossen LeRobot plugin's ``joint_0.pos .. left_carriage_joint.pos``; app.record writes either, app.replay reads both
and plays them alike."""

import json

import numpy as np
import pytest

from app.dataset.joint_names import arms_of, layout_names, plugin_names, trossen_names
from app.dataset.robot_map import map_to_robot
from app.errors import DatasetError
from app.record import main as record
from app.replay import main as replay
from tests.conftest import ROOT

CONFIG = str(ROOT / "configs/single_ik.yaml")


def test_the_plugin_names_each_arms_six_joints_and_its_carriage():
    assert plugin_names(1) == [f"joint_{i}.pos" for i in range(6)] + ["left_carriage_joint.pos"]
    two = plugin_names(2)
    assert two[:7] == [f"left_{n}" for n in plugin_names(1)] and two[7:] == [f"right_{n}" for n in plugin_names(1)]
    assert layout_names(2, "kits") == trossen_names(2)
    with pytest.raises(DatasetError, match="naming"):
        layout_names(1, "ros")


@pytest.mark.parametrize("n_arms", [1, 2])
def test_both_namings_map_onto_the_same_robot_dofs(n_arms):
    dofs = ([f"joint_{i}" for i in range(6)] + ["left_carriage_joint", "right_carriage_joint"] if n_arms == 1 else
            [f"{s}/joint_{i}" for s in ("left", "right") for i in range(6)]
            + [f"{s}/{f}_carriage_joint" for s in ("left", "right") for f in ("left", "right")])
    kits, plugin = map_to_robot(trossen_names(n_arms), dofs), map_to_robot(plugin_names(n_arms), dofs)
    assert arms_of(plugin_names(n_arms)) == arms_of(trossen_names(n_arms))
    assert np.array_equal(kits.columns, plugin.columns) and np.array_equal(kits.dofs, plugin.dofs)


def test_a_recording_in_the_plugins_names_replays_as_the_kits_names_do(tmp_path):
    """The same episode recorded in either naming: info.json names it so, and both replay to the same path."""
    paths = {}
    for naming in ("kits", "plugin"):
        out = tmp_path / naming
        assert record([CONFIG, "--cameras", "none", "--joint-names", naming, "--episodes", "1", "--duration", "0.3",
                       "--keep-failed", "--out", str(out)]) == 0
        info = json.loads((out / "meta/info.json").read_text())
        assert info["features"]["action"]["names"] == layout_names(1, naming)
        assert replay([str(out), "--config", CONFIG, "--no-video", "--out", str(tmp_path / f"{naming}_replay")]) == 0
        paths[naming] = json.loads((tmp_path / f"{naming}_replay/replay.json").read_text())["per_frame"]["ee_pos"]
    assert np.allclose(paths["kits"], paths["plugin"])
