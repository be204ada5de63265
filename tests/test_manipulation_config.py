"""The manipulation sections (objects, gripper, pick_place and script tasks): every bad value is a one-line
ConfigError naming the file and the key, before anything runs; the CLI exits 2 and writes nothing."""

import subprocess
import sys

import pytest

from app import ConfigError
from app.config.loader import load_run_config
from tests.conftest import ROOT

PICK = f"scene: {ROOT / 'scenes' / 'pick_place.yaml'}\ntask:\n  type: pick_place\n"
TABLE = f"scene: {ROOT / 'scenes' / 'table.yaml'}\n"


def _objects(text: str) -> str:
    return PICK + "scene_overrides:\n  objects:\n" + text


@pytest.mark.parametrize("text, message", [
    (_objects("    - {name: cube, mass: 0}\n"), r"scene_overrides.objects\[0\].mass: must be > 0 kg, got 0"),
    (_objects("    - {name: cube, mass: .nan}\n"), r"objects\[0\].mass: must be a finite number"),
    (_objects("    - {name: cube, size: [0.05, -0.05, 0.05]}\n"), r"objects\[0\].size: every side must be > 0 m"),
    (_objects("    - {name: cube, pos_range: [[0.4, 0, 0.03], [0.3, 0.1, 0.03]]}\n"),
     r"objects\[0\].pos_range: needs \[\[x_lo, y_lo, z_lo\], \[x_hi, y_hi, z_hi\]\] with lo <= hi"),
    (_objects("    - {name: cube, yaw_range: [1.0, -1.0]}\n"), r"objects\[0\].yaw_range: needs \[lo, hi\] with lo <= hi"),
    (_objects("    - {name: cube, pos: [0.3, 0.0, 0.0]}\n"),
     r"objects\[0\].pos: object 'cube' would start inside the table: its bottom at z = -0.0250 m"),
    (_objects("    - {name: cube, shape: cone}\n"), r"objects\[0\].shape: 'cone' is not one of \['box', 'cylinder'"),
    (_objects("    - {name: cube, shape: mesh, file: nowhere.obj}\n"), r"objects\[0\].file: shape 'mesh' needs an existing file"),
    (_objects("    - {name: table}\n"), r"objects\[0\].name: 'table' is already the name of a box or an object"),
    (_objects("    - {name: cube, colour: red}\n"), r"objects\[0\]: unknown key 'colour'"),
    (_objects("    - {name: cube, shape: mesh, file: %s}\n" % (ROOT / "assets" / "urdf" / "widowx_ai.urdf")),
     r"task.object: 'cube' is a mesh: pick_place takes its grasp geometry from a box's, cylinder's or sphere's"),
    (PICK + "  object: ball\n", r"task.object: 'ball' is not an object of the scene; objects: \['cube'\]"),
    (PICK + "  place_range: [[0.4, 0.0], [0.3, 0.1]]\n", r"task.place_range: needs \[\[x_lo, y_lo\], \[x_hi, y_hi\]\]"),
    (PICK + "  grasp_depths: [1.5]\n", r"task.grasp_depths: fractions of the object's height in \(0, 1\]"),
    (PICK + "  speed: 0\n", r"task.speed: must be > 0, got 0"),
    (PICK + "  grasp_min_distance: -0.01\n", r"task.grasp_min_distance: must be in \[0, 0.1\] m"),
    (PICK + "  grasp_collision: maybe\n", r"task.grasp_collision: expected bool \(true or false\), got 'maybe'"),
    (PICK + "scene_overrides:\n  robot:\n    gripper: {force: 500}\n",
     r"scene_overrides.robot.gripper.force: must be in \(0, 400\] N \(the URDF effort"),
    (PICK + "scene_overrides:\n  robot:\n    gripper: {joints: [joint_9]}\n",
     r"gripper.joints: \['joint_9'\]: must name distinct movable joints.*unknown \['joint_9'\]"),
    (PICK + "scene_overrides:\n  robot:\n    gripper: {approach_axis: x, closing_axis: -x}\n",
     r"gripper.closing_axis: '-x' must be one of .* and differ from approach_axis 'x'"),
    (PICK + "scene_overrides:\n  robot:\n    gripper: {open: [0.05, 0.05]}\n", r"gripper.open: needs one value per joint"),
    (PICK + "scene_overrides:\n  robot:\n    gripper: null\n", r"task.type: pick_place needs a gripper"),
    (PICK.replace("type: pick_place", "type: fingertips"), r"task.type: 'fingertips' moves the finger joints, which robot.gripper owns"),
    (TABLE + "task:\n  type: script\n  waypoints:\n    - {t: 0.5, pos: [0.3, 0, 0.1]}\n", r"task.waypoints: needs rows .* the first at t: 0"),
    (TABLE + "task:\n  type: script\n  waypoints:\n    - {t: 0, pos: [0.3, 0, 0.1]}\n    - {t: 0, pos: [0.3, 0, 0.2]}\n",
     r"task.waypoints: times must increase strictly"),
    (TABLE + "task:\n  type: script\n  waypoints:\n    - {t: 0, pos: [0.3, 0, 0.1], gripper: 1}\n",
     r"rows close the gripper but the scene's robot has none"),
    (TABLE + "task:\n  type: script\n  waypoints:\n    - {t: 0, pos: [0.3, 0, 0.1]}\n    - {t: 1, pos: [0.3, 0, 0.1], gripper: 5}\n",
     r"task.waypoints\[1\].gripper: must be in \[0, 1\] \(0 open, 1 closed\), got 5"),
    (TABLE + "task:\n  type: script\n  waypoints:\n    - {t: 0, pos: [0.3, 0, 0.1], quat: [0, 0, 0, 0]}\n",
     r"task.waypoints\[0\].quat: must be a nonzero"),
    (TABLE + "task:\n  type: script\n  waypoints:\n    - {t: 0, pos: [0.3, 0, 0.1], grip: 1}\n",
     r"task.waypoints\[0\]: unknown key 'grip'; did you mean 'gripper'\?"),
])
def test_bad_manipulation_values_are_config_errors_naming_the_key(tmp_path, text, message):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_run_config(path)


def test_cli_refuses_a_massless_object_with_one_line_and_writes_nothing(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(_objects("    - {name: cube, mass: -1}\n"))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "app.run", str(path), "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "objects[0].mass: must be > 0 kg" in proc.stderr.strip().splitlines()[-1]
    assert not out.exists() or not any(out.iterdir())


def test_a_scene_files_boxes_objects_and_gripper_are_the_specs_the_scene_takes_whole():
    """One scene spec: the loaded sections are app.specs' own dataclasses, and Scene builds them as they are."""
    from app.episode.scene_build import build_scene
    from app.specs import BoxSpec, GripperSpec, ObjectSpec
    run = load_run_config(ROOT / "configs" / "pick_place.yaml", n_envs=1)
    scene_cfg = run.scene_config
    assert type(scene_cfg.table) is BoxSpec and type(scene_cfg.objects[0]) is ObjectSpec
    assert type(scene_cfg.robot.gripper) is GripperSpec
    scene, robot = build_scene(run)
    try:
        assert {b.name: b for b in scene.boxes}["table"] == scene_cfg.table
        assert scene.objects["cube"].spec == scene_cfg.objects[0]
        assert robot.gripper.spec.joints == scene_cfg.robot.gripper.joints
    finally:
        scene.close()
