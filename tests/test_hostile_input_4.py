"""Hostile input, round four (#41): sizes bounded before the work, numbers that are not real refused, the API after
close(), object files PyBullet would mis-simulate, and reports that never hold NaN or inf."""

import argparse
import re
import json
import logging

import numpy as np
import pytest

from app import RobotModel
from app.errors import AppError, ConfigError, DatasetError, InputError
from app.sim.scene import Scene
from app.specs import ObjectSpec
from tests.conftest import ROOT

URDF = str(ROOT / "assets" / "urdf" / "widowx_ai.urdf")


@pytest.mark.parametrize("key, value", [("scene_overrides.robot.base_pos", [1e200, 0.0, 0.0]),
                                        ("task.radius", 1e200), ("env_spacing", [-1e9, 1.0])])
def test_a_number_beyond_a_million_in_a_config_is_refused_naming_its_key(key, value):
    """1e200 m used to run the whole simulation and end in an 'inf is not JSON compliant' traceback."""
    from app.config.loader import load_run_config

    with pytest.raises(ConfigError, match=r"must be within \+-1e\+06 \(SI units"):
        load_run_config(ROOT / "configs" / "single_ik.yaml", sets={key: value})


def test_an_api_spec_with_a_huge_size_is_refused_before_the_build():
    scene = Scene()
    try:
        with pytest.raises(InputError, match=r"object 'c': size\[0\]: must be within"):
            scene.add_object(ObjectSpec(name="c", size=(1e200, 0.05, 0.05)))
    finally:
        scene.close()


def test_a_report_value_that_is_not_finite_is_written_as_null_and_named(tmp_path, caplog):
    from app.render.report import write_json_atomic

    with caplog.at_level(logging.WARNING):
        write_json_atomic(tmp_path / "r.json", {"env": [{"err": float("inf")}], "ok": 1.5, "q": np.array([np.nan])})
    assert json.loads((tmp_path / "r.json").read_text()) == {"env": [{"err": None}], "ok": 1.5, "q": [None]}
    assert "env[0].err" in caplog.text and "q" in caplog.text


@pytest.mark.parametrize("kwargs, words", [({"max_samples": 10 ** 9}, "max_restarts (Genesis: max_samples - 1) <= "),
                                           ({"max_solver_iters": 10 ** 9}, "max_iters (Genesis: max_solver_iters)")])
def test_ik_attempts_and_iterations_are_bounded_before_any_allocation(kwargs, words):
    """max_samples=1e9 asked numpy for 60 GiB (a MemoryError, not an AppError)."""
    m = RobotModel.from_urdf(URDF)
    with pytest.raises(InputError, match=re.escape(words)):
        m.inverse_kinematics("ee_gripper_link", pos=[0.3, 0.0, 0.2], quat=[0, 1, 0, 0], **kwargs)


@pytest.mark.parametrize("pos, words", [([0.3 + 1j, 0.0, 0.2], "complex"), ([True, False, True], "boolean")])
def test_ik_targets_that_are_not_real_numbers_are_refused(pos, words):
    """numpy dropped the imaginary part and read True as 1 m."""
    m = RobotModel.from_urdf(URDF)
    with pytest.raises(InputError, match=f"pos must be real numbers, got {words} values"):
        m.inverse_kinematics("ee_gripper_link", pos=pos, quat=[0, 1, 0, 0])
    with pytest.raises(InputError, match=f"must be real numbers, got {words}"):
        m.forward_kinematics(np.full(m.n_dofs, pos[0]))


@pytest.mark.parametrize("field, value", [("resolution", 1e-9), ("timeout", 1e9), ("check_resolution", 0.0),
                                          ("max_retry", 10 ** 6)])
def test_plan_options_that_would_search_for_hours_are_refused(field, value):
    from app.planning.planner import PlanOptions

    with pytest.raises(InputError, match=field):
        PlanOptions(**{field: value})


def test_a_problems_file_of_more_problems_than_a_batch_takes_is_refused(tmp_path):
    from app.planning.problems import MAX_PROBLEMS, read_problems

    path = tmp_path / "p.yaml"
    problem = "  - {start: [0, 1, 1, 0, 0, 0, 0.02, 0.02], goal: [0.1, 1, 1, 0, 0, 0, 0.02, 0.02]}\n"
    path.write_text(f"robot: {URDF}\nproblems:\n" + problem * (MAX_PROBLEMS + 1))
    with pytest.raises(ConfigError, match=f"problems: {MAX_PROBLEMS + 1} problems; a file takes at most"):
        read_problems(path)


def test_a_solve_clearance_no_arm_could_keep_is_refused():
    """--min-distance 1e200 printed '8 of 8 targets converged, 8 of them collision-free'."""
    from app.solve import _options

    with pytest.raises(InputError, match=r"--min-distance must be a clearance in \[0, 1\] m"):
        _options(argparse.Namespace(min_distance=1e200, box=[]))


def test_a_trajectory_npz_that_is_not_a_zip_is_a_dataset_error_naming_it(tmp_path):
    from app.dataset.trajectory import read_table

    path = tmp_path / "traj.npz"
    path.write_bytes(b"PK\x03\x04garbage")  # a zip header, then nothing a zip holds
    with pytest.raises(DatasetError, match=r"traj\.npz: cannot read it as npz"):
        read_table(path)


def test_objects_and_debug_frames_after_close_are_app_errors():
    scene = Scene()
    obj = scene.add_object(ObjectSpec(name="c"))
    scene.build(n_envs=2)
    scene.close()
    with pytest.raises(AppError, match="object 'c': the scene is closed"):
        obj.get_pos()
    with pytest.raises(AppError, match="the scene is closed"):
        scene.draw_debug_frame(np.eye(4))


@pytest.mark.parametrize("content, words", [("v 0 0 0\nv 0 0 0\nv 0 0 0\nf 1 2 3\n", "no surface"),
                                            ("v 0 0 0\nv 1e200 0 0\nv 0 1 0\nf 1 2 3\n", r"a vertex lies 1e\+200")])
def test_a_mesh_without_a_surface_or_with_absurd_coordinates_is_refused(tmp_path, content, words):
    path = tmp_path / "m.obj"
    path.write_text(content)
    scene = Scene()
    try:
        with pytest.raises(AppError, match=words):
            scene.add_object(ObjectSpec(name="m", shape="mesh", file=str(path)))
    finally:
        scene.close()


def test_vector_env_arguments_of_the_wrong_kind_are_input_errors():
    from app import envs

    with pytest.raises(InputError, match="num_envs must be a whole number 1..1024, got True"):
        envs.make_vec_env(ROOT / "configs" / "pick_place.yaml", True, obs_type="state")
    with pytest.raises(InputError, match="autoreset_mode must be one of"):
        envs.make_vec_env(ROOT / "configs" / "pick_place.yaml", 2, autoreset_mode="Sometimes", obs_type="state")


def test_complex_actions_are_refused_in_every_action_mode():
    from app import envs

    for mode in ("joint", "ee_pose", "ee_delta"):
        env = envs.make_vec_env(ROOT / "configs" / "pick_place.yaml", 1, obs_type="state", action_mode=mode)
        try:
            env.reset(seed=0)
            action = np.zeros((1, env.single_action_space.shape[0]), dtype=complex)
            with pytest.raises(InputError, match="an action must be real numbers"):
                env.step(action)
        finally:
            env.close()


@pytest.mark.parametrize("kwargs, words", [
    (dict(name="../../evil"), "name: must be a plain name"), (dict(name=""), "name: must be a plain name"),
    (dict(name="c", file=str(URDF)), "file: shape 'box' is made from its sizes and reads no file")])
def test_an_object_whose_name_is_a_path_or_whose_file_would_be_ignored_is_refused(kwargs, words):
    scene = Scene()
    try:
        with pytest.raises(InputError, match=words):
            scene.add_object(ObjectSpec(**kwargs))
    finally:
        scene.close()


@pytest.mark.parametrize("key, value, words", [("env_spacing", [-1.0, 1.0], "env_spacing: must be two distances"),
                                               ("video.axis_length", -0.1, "axis_length: must be a length")])
def test_negative_spacings_and_frame_sizes_are_refused(key, value, words):
    from app.config.loader import load_run_config

    with pytest.raises(ConfigError, match=words):
        load_run_config(ROOT / "configs" / "single_ik.yaml", sets={key: value})


def test_distances_of_joints_that_are_not_numbers_are_an_input_error():
    from app.collision import World, WorldBox, collision_model

    cm = collision_model(RobotModel.from_urdf(URDF), World(boxes=(WorldBox("t", (0.4, 0.4, 0.02), (0.25, 0, -0.02)),)))
    with pytest.raises(InputError, match="q must be numeric"):
        cm.distances("abc")


def test_record_episodes_beyond_any_run_name_the_option(tmp_path, capsys):
    from app.record import main

    assert main([str(ROOT / "configs" / "pick_place.yaml"), "--episodes", "1000000000", "--out",
                 str(tmp_path / "out")]) == 2
    assert "--episodes must be 1..65536" in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists()


def test_an_environment_stepped_before_its_reset_or_made_with_an_unknown_render_mode_says_so():
    import gymnasium as gym

    from app import envs  # noqa: F401 - registers the ids

    env = gym.make("app/WidowXAIPickCube-v0", obs_type="state", disable_env_checker=True)
    try:
        with pytest.raises(InputError, match=r"environment 0 was never reset: call reset\(\) before step\(\)"):
            env.unwrapped.step(env.action_space.sample())
    finally:
        env.close()
    with pytest.raises(InputError, match="render_mode must be one of"):
        gym.make("app/WidowXAIPickCube-v0", obs_type="state", render_mode="hologram")


def test_collision_margins_and_object_poses_out_of_any_range_are_refused():
    from app.collision import World, WorldBox, collision_model

    cm = collision_model(RobotModel.from_urdf(URDF), World(boxes=(WorldBox("t", (0.4, 0.4, 0.02), (0.25, 0, -0.02)),)))
    with pytest.raises(InputError, match=r"margins: world must be a clearance in \[0, 1\] m, got nan"):
        cm.margins(np.nan)
    scene = Scene()
    obj = scene.add_object(ObjectSpec(name="c"))
    scene.build(n_envs=2)
    try:
        with pytest.raises(InputError, match=r"object 'c': pos must be within \+-1e\+06 m"):
            obj.set_pose([1e200, 0.0, 0.1])
    finally:
        scene.close()


def test_a_joint_limit_given_as_nan_in_a_robot_description_is_an_error_naming_the_joint():
    from app.errors import URDFError

    text = (ROOT / "assets" / "urdf" / "widowx_ai.urdf").read_text()
    bad = re.sub(r'(<joint name="joint_1"[\s\S]*?<limit[^>]*?)lower="[^"]*"', r'\1lower="nan"', text, count=1)
    assert bad != text
    with pytest.raises(URDFError, match="joint 'joint_1': <limit> .*lower=nan.* holds NaN"):
        RobotModel.from_urdf_string(bad)


def test_a_tracking_rate_below_one_tick_a_second_is_refused(tmp_path, capsys):
    from app.track import main

    traj = tmp_path / "t.csv"
    traj.write_text("t,x,y,z,qw,qx,qy,qz\n0,0.3,0,0.2,0,1,0,0\n1,0.3,0.05,0.2,0,1,0,0\n")
    assert main([str(traj), "--config", str(ROOT / "configs" / "single_ik.yaml"), "--rate", "1e-200",
                 "--out", str(tmp_path / "out")]) == 2
    assert "--rate must be in [1, 10000] Hz" in capsys.readouterr().err.strip().splitlines()[-1]
