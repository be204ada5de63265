"""A run reads, expands and parses its robot description once: the config's checks, the controllers' model and
the simulator's bodies share what the loader read (``scene_config.description``). Counted with cProfile, which
sees every call of the Python functions whatever name they were imported under."""

import cProfile
import pstats
from pathlib import Path

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.config.robots import robot_model
from app.episode.scene_build import build_scene
from app.kinematics import compose, description, urdf

COUNTED = {"parse_urdf_string": urdf, "read_description": description, "compose_urdf": compose}


def _calls(work) -> dict[str, int]:
    """How often ``work()`` called each COUNTED function."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        work()
    finally:
        profile.disable()
    stats = pstats.Stats(profile).stats
    return {name: sum(s[1] for (file, _, func), s in stats.items() if func == name and Path(file) ==
                      Path(module.__file__)) for name, module in COUNTED.items()}


def _load_and_build(config: str):
    run = load_run_config(config, n_envs=2, duration=0.2)
    scene, robot = build_scene(run)
    try:
        model = robot_model(run.scene_config)  # what the dataset blocks and the report ask for
        assert model.dof_names == robot.model.dof_names
        np.testing.assert_array_equal(model.q_upper, robot.model.q_upper)
    finally:
        scene.close()


@pytest.mark.parametrize("config, composed", [("configs/single_ik.yaml", False), ("configs/bimanual_qp.yaml", True)])
def test_one_robot_or_a_rig_is_read_composed_and_parsed_once_per_run(config, composed):
    calls = _calls(lambda: _load_and_build(config))
    assert calls["compose_urdf"] == composed, calls
    # a rig: each of its two arms read and parsed once while composing (their joint windows), then the rig
    assert calls["read_description"] == 1 + composed, calls
    assert calls["parse_urdf_string"] == 1 + 2 * composed, calls
