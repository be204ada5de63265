"""Config loading: shipped configs validate; every bad input is a specific ConfigError."""

from pathlib import Path

import pytest
import yaml

from app import ConfigError
from app.config.loader import load_run_config
from tests.conftest import ROOT

CONFIGS = sorted((ROOT / "configs").glob("*.yaml")) + sorted((ROOT / "configs" / "tasks").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_shipped_configs_load(path):
    run = load_run_config(path)
    robots = run.scene_config.robots or (run.scene_config.robot,)
    assert run.name == path.stem and all(Path(r.urdf).is_file() for r in robots)


def _write(tmp_path, text, name="run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


SCENE = f"scene: {ROOT / 'scenes' / 'table.yaml'}\n"


@pytest.mark.parametrize("text, message", [
    ("n_env: 4\n", r"unknown key 'n_env'; did you mean 'n_envs'\?"),
    ("task:\n  radius: 0.1\n  centre: [0, 0, 0]\n", r"task: unknown key 'centre'; did you mean 'center'\?"),
    ("n_envs: four\n", r"n_envs: expected an integer, got 'four'"),
    ("task:\n  center: [0.3, 0.1]\n", r"task.center: expected a list of 3 values"),
    ("duration: true\n", r"duration: expected a number"),
    ("n_envs: 0\n", r"n_envs: must be 1..max_envs=1024"),
    ("duration: -1\n", r"duration: must be a finite time in \(0, 3600\] s"),
    ("controller:\n  type: mpc\n", r"'mpc' is not one of \['ik', 'qp'\]"),
    ("video:\n  width: 641\n", r"video.width: must be an even number in 16..4096"),
    ("task:\n  type: fingertips\n  links: [left_fingertip, thumb]\n", r"task.links\[1\]: unknown link 'thumb'; valid link names"),
    ("scene_overrides:\n  robot:\n    ee_link: hand\n", r"run.yaml: scene_overrides.robot.ee_link: unknown link 'hand'; valid link names: \[.*ee_gripper_link"),
    ("scene_overrides:\n  physics_hz: 0\n", r"physics_hz: must be in \[1, 10000\] Hz"),
])
def test_bad_values_are_config_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_run_config(_write(tmp_path, SCENE + text))


def test_yaml_syntax_error_names_line_and_column(tmp_path):
    with pytest.raises(ConfigError, match=r"run.yaml:3:11: YAML syntax error: mapping values are not allowed"):
        load_run_config(_write(tmp_path, SCENE + "n_envs: 2\nduration: : 3\n"))


def test_missing_files_are_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: file not found"):
        load_run_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="no_scene.yaml: file not found"):
        load_run_config(_write(tmp_path, "scene: no_scene.yaml\n"))
    with pytest.raises(ConfigError, match="robot.urdf: file not found"):
        load_run_config(_write(tmp_path, SCENE + "scene_overrides:\n  robot:\n    urdf: missing.urdf\n"))


def test_scene_overrides_merge_into_the_scene(tmp_path):
    run = load_run_config(_write(tmp_path, SCENE + "scene_overrides:\n  table:\n    size: [1.0, 1.0, 0.02]\n"))
    assert run.scene_config.table.size == (1.0, 1.0, 0.02)
    assert run.scene_config.table.name == "table"  # the rest of the section is kept


def test_cli_overrides_replace_run_fields():
    run = load_run_config(ROOT / "configs" / "single_ik.yaml", duration=0.25, seed=7)
    assert (run.duration, run.seed) == (0.25, 7)


def test_misspelt_link_in_a_scene_file_names_that_file_the_key_and_the_nearest_link(tmp_path):
    scene = tmp_path / "my_scene.yaml"
    scene.write_text(f"robot:\n  urdf: {ROOT / 'assets' / 'urdf' / 'widowx_ai.urdf'}\n  ee_link: ee_griper_link\n")
    with pytest.raises(ConfigError, match=r"my_scene.yaml: robot.ee_link: unknown link 'ee_griper_link' "
                                          r"\(did you mean 'ee_gripper_link'\?\); valid link names"):
        load_run_config(_write(tmp_path, f"scene: {scene}\n"))


@pytest.mark.parametrize("text, message", [
    ("task:\n  type: circle\n  waypoints: [[0, 0, 0], [1, 0, 0]]\n",
     r"run.yaml: task: unknown key 'waypoints'.* \(type 'circle'; that key belongs to type \['path', 'script'\]\)"),
    ("controller:\n  type: ik\n  d_safe: 0.02\n",
     r"run.yaml: controller: unknown key 'd_safe'.* \(type 'ik'; that key belongs to type \['qp'\]\)"),
    ("controller:\n  type: qp\n  mode: kinematic\n", r"controller: unknown key 'mode'"),
    ("task:\n  type: cirle\n", r"task.type: 'cirle' \(did you mean 'circle'\?\) is not one of"),
])
def test_each_section_type_takes_only_its_own_keys(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_run_config(_write(tmp_path, SCENE + text))


def test_controller_settings_come_from_the_yaml_with_the_library_defaults_elsewhere(tmp_path):
    from app.control.controllers import PoseIKControllerConfig, QPControllerConfig

    run = load_run_config(_write(tmp_path, SCENE + "controller:\n  type: qp\n  posture_gain: 2.5\n  stall_window: 60\n"
                                 "  max_rows: 4\n"))
    assert isinstance(run.controller, QPControllerConfig)
    assert (run.controller.posture_gain, run.controller.stall_window, run.controller.max_rows) == (2.5, 60, 4)
    ik = load_run_config(_write(tmp_path, SCENE + "controller:\n  type: ik\n"))
    assert isinstance(ik.controller, PoseIKControllerConfig) and ik.controller.max_restarts == 50
    with pytest.raises(ConfigError, match="dt"):
        load_run_config(_write(tmp_path, SCENE + "controller:\n  type: ik\n  dt: 0.1\n"))  # set by the run


@pytest.mark.parametrize("override, where", [
    ({"objects": [{"name": "cube", "size": [0.05, 0.05]}]}, "scene_overrides.objects[0].size: expected a list of 3"),
    ({"objects": [{"name": "cube", "colour": [1, 0, 0, 1]}]}, "scene_overrides.objects[0]: unknown key 'colour'"),
    ({"table": {"size": [0.8, "wide", 0.04]}}, "scene_overrides.table.size[1]: expected a number"),
])
def test_a_bad_value_set_by_scene_overrides_is_blamed_on_the_run_file(tmp_path, override, where):
    run = tmp_path / "mine.yaml"
    run.write_text(yaml.safe_dump({"scene": str(ROOT / "scenes" / "pick_place.yaml"), "scene_overrides": override,
                                   "task": {"type": "pick_place"}}))
    with pytest.raises(ConfigError) as err:
        load_run_config(run)
    assert str(err.value).startswith(f"mine.yaml: {where}"), str(err.value)
