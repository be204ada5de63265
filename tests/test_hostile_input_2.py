"""Hostile and careless input, round two (#24): xacro arguments, joint windows, closed scenes, API index
checks and bounds; each a one-line AppError saying what to fix."""

import re

import numpy as np
import pytest

from app import RobotModel
from app.errors import AppError, InputError, URDFError
from app.ik.limits.joint_box import LIMIT_MARGIN
from app.sim.scene import BoxSpec, Scene
from tests.conftest import ROOT, WIDOWX_URDF


def test_a_xacro_missing_its_arguments_names_them_and_says_to_pass_xacro_args(tmp_path):
    xacro_file = tmp_path / "needs_args.urdf.xacro"
    xacro_file.write_text('<?xml version="1.0"?>\n<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'
                          '  <xacro:arg name="has_default" default="x_"/>\n  <link name="$(arg has_default)a"/>\n'
                          '  <link name="$(arg prefix)base"/>\n  <link name="$(arg suffix)tip"/>\n'
                          '  <joint name="j1" type="fixed"><parent link="$(arg prefix)base"/><child link="$(arg has_default)a"/>'
                          '</joint>\n  <joint name="j2" type="fixed"><parent link="$(arg prefix)base"/>'
                          '<child link="$(arg suffix)tip"/></joint>\n</robot>\n')
    with pytest.raises(URDFError, match=r"needs_args.urdf.xacro: xacro argument\(s\) prefix, suffix needed but not "
                                        r"given: pass them as xacro_args .*robot.xacro_args"):
        RobotModel.from_urdf(str(xacro_file))
    with pytest.raises(URDFError, match=r"argument\(s\) suffix needed"):
        RobotModel.from_urdf(str(xacro_file), xacro_args={"prefix": "p_"})
    model = RobotModel.from_urdf(str(xacro_file), xacro_args={"prefix": "p_", "suffix": "s_"})
    assert set(model.link_names) == {"x_a", "p_base", "s_tip"}


@pytest.fixture()
def scene4():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    scene.build(n_envs=4)
    yield scene, robot
    scene.close()


def test_set_qpos_outside_the_joint_window_names_the_dof_the_value_and_the_window(scene4):
    _, robot = scene4
    with pytest.raises(InputError, match=r"qpos\[0\]: DOF 'joint_0' = 100 is outside its joint window \[-3.\d+, "
                                         r"3.\d+\] \(32 value\(s\) outside\)"):
        robot.set_qpos(np.full((4, 8), 100.0))
    with pytest.raises(InputError, match=r"DOF 'right_carriage_joint' = -0.5 is outside its joint window \[0, 0.044\]"):
        robot.set_qpos([-0.5], qs_idx_local=[6])
    lo, hi = robot.get_dofs_limit()
    robot.set_qpos(hi + 1e-7)  # within the tolerance: clipped into the window
    assert np.all(robot.get_qpos() <= hi + 1e-12)


def test_motor_targets_outside_the_window_are_clipped_inside_it_so_no_dof_leaves_it(scene4, monkeypatch):
    """The motors are handed targets LIMIT_MARGIN inside the window; fingers commanded far out stay within 1e-6 m
    of their window, and the whole arm, slammed into its limits (PyBullet's motors ignore the URDF speeds), ends
    within 1e-5 after 1 s, and inside it held there 2 s."""
    import app.sim.robot

    scene, robot = scene4
    lo, hi = robot.get_dofs_limit()
    sent = []
    real = app.sim.robot.pb.setJointMotorControlArray
    monkeypatch.setattr(app.sim.robot.pb, "setJointMotorControlArray",
                        lambda *a, **k: (sent.append(k["targetPositions"]), real(*a, **k)))
    for far, dofs, tol in ((1.0, [6, 7], 1e-6), (-1.0, [6, 7], 1e-6), (100.0, None, 1e-5), (-100.0, None, 1e-5)):
        sent.clear()
        robot.control_dofs_position(np.full((4, 8 if dofs is None else 2), far), dofs_idx_local=dofs)
        k = slice(None) if dofs is None else dofs
        np.testing.assert_allclose(sent, (hi - LIMIT_MARGIN if far > 0 else lo + LIMIT_MARGIN)[:, k], atol=1e-12)
        for _ in range(240):  # 1 s
            scene.step()
        q = robot.get_qpos()
        assert np.all(q >= lo - tol) and np.all(q <= hi + tol), (far, (q - hi).max(), (lo - q).max())
    for far in (100.0, -100.0):
        robot.control_dofs_position(np.full((4, 8), far))
        for _ in range(480):  # 2 s held
            scene.step()
        q = robot.get_qpos()
        assert np.all(q >= lo) and np.all(q <= hi), (far, (q - hi).max(), (lo - q).max())


def test_a_closed_scene_says_so_on_every_call():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    scene.build()
    scene.close()
    for call in (lambda: robot.set_qpos(np.zeros(8)), lambda: robot.get_qpos(), scene.step, scene.reset,
                 lambda: robot.inverse_kinematics("ee_gripper_link", pos=[0.3, 0, 0.2]),
                 lambda: scene.add_box(BoxSpec("b", (0.1, 0.1, 0.1), (0.3, 0.0, 0.05)))):
        with pytest.raises(AppError, match="the scene is closed"):
            call()


@pytest.mark.parametrize("call, message", [
    (lambda r: r.set_qpos(np.zeros(3), qs_idx_local=[0, 0, 1]), r"dofs_idx_local \[0, 0, 1\] names \[0\] more than once"),
    (lambda r: r.control_dofs_position(np.zeros(3), dofs_idx_local=[0, 0, 1]), r"dofs_idx_local \[0, 0, 1\] names"),
    (lambda r: r.inverse_kinematics("ee_gripper_link", pos=[0.3, 0, 0.2], dofs_idx_local=[0, 0, 1]),
     r"dofs_idx_local \[0, 0, 1\] names a DOF more than once"),
    (lambda r: r.get_qpos(envs_idx=[1, 1]), r"envs_idx \[1, 1\] names \[1\] more than once"),
    (lambda r: r.set_qpos(np.zeros(8), envs_idx=[1, 1]), r"envs_idx \[1, 1\] names"),
])
def test_an_index_twice_is_refused(scene4, call, message):
    with pytest.raises(InputError, match=message):
        call(scene4[1])


def test_envs_idx_on_an_unbatched_scene_is_refused():
    with Scene() as scene:
        robot = scene.add_robot(str(WIDOWX_URDF))
        scene.build(n_envs=None)
        for envs_idx in (0, [0], [1]):
            with pytest.raises(InputError, match=r"scene was built without n_envs .*build with n_envs=N"):
                robot.get_qpos(envs_idx=envs_idx)
        assert robot.get_qpos().shape == (8,)


@pytest.mark.parametrize("kwargs, message", [
    (dict(size=(0.1, -0.1, 0.1)), r"box 'b': size: every side must be > 0 m, got \(0.1, -0.1, 0.1\)"),
    (dict(size=(0.1, 0.0, 0.1)), r"size: every side must be > 0 m"),
    (dict(pos=(float("nan"), 0.0, 0.0)), r"box 'b': pos\[0\]: must be a finite number, got nan"),
    (dict(pos=(0.0, 0.0)), r"box 'b': pos: expected a list of 3 values, got 2"),
    (dict(pos="0 0 0"), r"box 'b': pos: expected a list"),
    (dict(quat=(0.0, 0.0, 0.0, 0.0)), r"quat: must be a nonzero \(w, x, y, z\) quaternion"),
])
def test_a_box_with_a_bad_size_position_or_orientation_is_refused(kwargs, message):
    """The scene checks a BoxSpec as a scene file's box is checked, before anything is created."""
    args = dict(name="b", size=(0.1, 0.1, 0.1), pos=(0.3, 0.0, 0.05)) | kwargs
    with Scene() as scene:
        with pytest.raises(InputError, match=message):
            scene.add_box(BoxSpec(**args))
        assert scene.boxes == []


def test_two_boxes_with_one_name_are_refused():
    with Scene() as scene:
        scene.add_box(BoxSpec("b", (0.1, 0.1, 0.1), (0.3, 0.0, 0.05)))
        with pytest.raises(InputError, match="a box named 'b' was already added"):
            scene.add_box(BoxSpec("b", (0.2, 0.1, 0.1), (0.0, 0.3, 0.05)))


def test_n_envs_is_bounded_before_anything_is_created(monkeypatch):
    import app.sim.scene

    created = []
    monkeypatch.setattr(app.sim.scene.Scene, "_create_box", lambda *a: created.append(a))
    with Scene() as scene:
        scene.add_box(BoxSpec("b", (0.1, 0.1, 0.1), (0.3, 0.0, 0.05)))
        with pytest.raises(InputError, match=r"n_envs=10000000 is above max_envs=1024 .*max_envs=N"):
            scene.build(n_envs=10**7)
        with pytest.raises(InputError, match=r"n_envs=2000 is above max_envs=1999"):
            scene.build(n_envs=2000, max_envs=1999)
        assert not created and not scene.built
        scene.build(n_envs=3)
        assert len(created) == 3


def test_a_scene_file_with_two_boxes_of_one_name_or_init_qpos_outside_the_window_is_a_config_error(tmp_path):
    from app.config.loader import load_run_config
    from app.errors import ConfigError

    table = "table: {name: table, size: [0.8, 0.7, 0.04], pos: [0.25, 0.0, -0.0205]}\n"
    for extra, message in (("obstacles:\n  - {name: table, size: [0.1, 0.1, 0.1], pos: [0.3, 0.1, 0.05]}\n",
                            r"box name\(s\) \['table'\] used twice"),
                           ("", r"robot.init_qpos: init_qpos: DOF 'joint_1' = 5 is outside its joint window")):
        scene = tmp_path / "scene.yaml"
        scene.write_text(f"robot:\n  urdf: {WIDOWX_URDF}\n  ee_link: ee_gripper_link\n"
                         f"  init_qpos: [0, {5 if not extra else 1}, 1, 0, 0, 0, 0.02, 0.02]\n" + table + extra)
        run = tmp_path / "run.yaml"
        run.write_text(f"scene: {scene}\n")
        with pytest.raises(ConfigError, match=message):
            load_run_config(run)


SCENE_LINE = f"scene: {ROOT / 'scenes' / 'table.yaml'}\n"


def _main_fails(capsys, tmp_path, args, message):
    """app.run's main exits 2 with ``message`` as its one error line and writes nothing."""
    from app.run import main

    out = tmp_path / "out"
    assert main([*args, "--no-video", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and re.search(message, err[-1]), err
    assert not out.exists()


@pytest.mark.parametrize("duration, message", [
    ("1e308", r"duration: must be a finite time in \(0, 3600\] s, got 1e\+308"),
    ("1e-300", r"duration: must be at least one physics step .* 1/physics_hz = 0.00416667 s, got 1e-300 s"),
])
def test_a_huge_or_tiny_duration_is_one_line(capsys, tmp_path, duration, message):
    _main_fails(capsys, tmp_path, [str(ROOT / "configs" / "single_ik.yaml"), "--duration", duration], message)


@pytest.mark.parametrize("text, message", [
    ("controller:\n  type: ik\n  stall_window: 1000000000000\n", r"controller.stall_window: must be 1..1000000 ticks"),
    ("controller:\n  type: qp\n  max_rows: 1000000000\n", r"controller.max_rows: must be 1..1000 collision rows"),
    ("max_envs: 100000000\nn_envs: 50000000\n", r"max_envs: must be 1..65536"),
    ("duration: 1.0\nseed: 3\nduration: 2.0\n", r"run.yaml:4:1: .*key 'duration' given twice \(first on line 2\)"),
    ("task:\n  type: static\n  center: [0.3, 0, 0.2]\n  center: [0.3, 0, 0.3]\n", r"key 'center' given twice"),
    ('report:\n  filename: "a\\nb.json"\n', r"report.filename: must be a file name without newlines or control"),
    ('video:\n  filename: "v\\tx.mp4"\n', r"video.filename: must be a file name without newlines or control"),
])
def test_resource_bounds_duplicate_keys_and_control_characters_are_config_errors(capsys, tmp_path, text, message):
    path = tmp_path / "run.yaml"
    path.write_text(SCENE_LINE + text)
    _main_fails(capsys, tmp_path, [str(path), "--duration", "0.1"], message)


def test_an_empty_out_is_refused_and_nothing_is_written(capsys, tmp_path):
    from app.run import main

    before = sorted(p.name for p in (ROOT / "videos").iterdir())
    assert main([str(ROOT / "configs" / "single_ik.yaml"), "--duration", "0.1", "--no-video", "--out", ""]) == 2
    assert "--out: must name a folder, got ''" in capsys.readouterr().err.strip().splitlines()[-1]
    assert sorted(p.name for p in (ROOT / "videos").iterdir()) == before


def _urdf(tmp_path, link_extra="", origin='xyz="0 0 0.1"', n_links=2):
    inertial = '<inertial><mass value="1"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial>'
    links = "".join(f'<link name="l{i}">{inertial if i else link_extra}</link>' for i in range(n_links))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin {origin}/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                     '</joint>' for i in range(1, n_links))
    path = tmp_path / "robot.urdf"
    path.write_text(f'<robot name="r">{links}{joints}</robot>')
    return path


@pytest.mark.parametrize("kwargs, message", [
    (dict(origin='xyz="0 nan 0.1"'), r"joint 'j1' origin xyz must be finite numbers, got '0 nan 0.1'"),
    (dict(origin='rpy="0 0 inf"'), r"joint 'j1' origin rpy must be finite numbers"),
    (dict(link_extra='<inertial><mass value="-1"/></inertial>'), r"link 'l0': mass must be a finite number >= 0 kg"),
    (dict(link_extra='<inertial><mass value="1"/><inertia ixx="-1" iyy="1" izz="1"/></inertial>'),
     r"link 'l0': inertia ixx must be a finite number >= 0 kg m\^2, got -1"),
    (dict(link_extra='<inertial><mass value="1"/><inertia ixx="1" ixy="nan" iyy="1" izz="1"/></inertial>'),
     r"link 'l0': inertia ixy must be a finite number, got nan"),
    (dict(link_extra='<visual><geometry><mesh filename="package://pkg/../../../etc/passwd.stl"/></geometry></visual>'),
     r"link 'l0': mesh 'package://pkg/../../../etc/passwd.stl' leaves its package"),
    (dict(n_links=1001), r"1001 links, more than this app handles \(MAX_LINKS = 512 in app/kinematics/urdf.py"),
])
def test_urdfs_with_nan_origins_negative_mass_or_inertia_escaping_meshes_or_too_many_links_are_refused(
        tmp_path, kwargs, message):
    """The model path refuses them, so app.solve (RobotModel) and Scene.build both do."""
    path = _urdf(tmp_path, **kwargs)
    with pytest.raises(URDFError, match=message):
        RobotModel.from_urdf(str(path))
    with Scene() as scene, pytest.raises(URDFError, match=message):
        scene.add_robot(str(path))


@pytest.mark.parametrize("args, message", [
    (["--seeds", "0:99999999999999999999"], r"99999999999999999999 seeds, more than one sweep runs \(MAX_EPISODES = 10000"),
    (["--seeds", "0:1000000"], r"1000000 seeds, more than one sweep runs \(MAX_EPISODES = 10000 in app/sweep.py\)"),
    (["--seeds", "0:4", "--workers", "1000"], r"--workers must be 1\.\.\d+ \(4 episodes"),
    (["--seeds", "0:2", "--set", "n_envs=100000", "--set", "max_envs=1000000"], r"max_envs: must be 1..65536"),
    (["--seeds", "0:2", "--out", "/etc/passwd"], r"--out /etc/passwd: exists and is not a folder"),
])
def test_sweep_bounds_its_episodes_workers_and_output_before_any_work(capsys, tmp_path, args, message):
    from app.sweep import main as sweep_main

    args = args if "--out" in args else [*args, "--out", str(tmp_path / "sweep")]
    assert sweep_main([str(ROOT / "configs" / "single_ik.yaml"), *args]) == 2
    assert re.search(message, capsys.readouterr().err.strip().splitlines()[-1])
    assert not (tmp_path / "sweep").exists()


@pytest.mark.parametrize("timeout, message", [
    ("0.5", r"could not reach the Ray cluster at {address} within 0.5 s .*APP_RAY_CONNECT_TIMEOUT=SECONDS"),
    ("forever", r"APP_RAY_CONNECT_TIMEOUT='forever': must be seconds")])
def test_an_unreachable_ray_address_gives_up_after_the_named_timeout(tmp_path, timeout, message):
    """Ray itself retries an address for minutes: the command gives up after APP_RAY_CONNECT_TIMEOUT (checked
    itself) with one line and exit 2, before building any scene or making its output folder."""
    import os
    import socket
    import subprocess
    import sys

    pytest.importorskip("ray")
    with socket.socket() as listener:  # a port that accepts no connection: bound, never listening
        listener.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        res = subprocess.run([sys.executable, "-m", "app.run", "configs/batched_ik.yaml", "--workers", "2",
                              "--ray-address", address, "--no-video", "--out", str(tmp_path / "out")], cwd=ROOT,
                             capture_output=True, text=True, timeout=60,  # a hang guard: Ray's retries take minutes
                             env={**os.environ, "APP_RAY_CONNECT_TIMEOUT": timeout})
    assert res.returncode == 2, res.stderr[-2000:]
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and re.search(message.format(address=re.escape(address)), last), last
    assert not (tmp_path / "out").exists()  # refused before any work: not even the output folder made
