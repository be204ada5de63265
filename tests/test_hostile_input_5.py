"""Hostile input, round five (#41): what the fourth round still accepted. Planning problems checked whole before any
planning, recordings only into new, empty or dataset folders, recorded episode indices and scene bodies that must
agree with the data, and scene keys that contradict each other or leave a waypoint, a gripper or a place target
meaningless."""

import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.config.loader import load_run_config
from app.errors import ConfigError, DatasetError, InputError
from tests.conftest import ROOT

PROBLEMS = ROOT / "configs" / "planning" / "shelf_problems.yaml"
START = [-0.5, 1.5, 0.9, -0.4, 0.0, 0.0, 0.044, 0.044]


def _problems_file(tmp_path, *problems):
    import yaml

    data = yaml.safe_load(PROBLEMS.read_text())
    data["robot"] = str(ROOT / "assets" / "urdf" / "widowx_ai.urdf")
    data["problems"] = list(problems)
    path = tmp_path / "problems.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("problem, words", [
    ({"start": START, "goal": [9.0, *START[1:]]}, r"problems\[1\]\.goal \(bad\): qpos_goal\[0\]: DOF 'joint_0' = 9 is "
                                                  r"outside its joint window"),
    ({"start": [-9.5, *START[1:]], "goal": START}, r"problems\[1\]\.start \(bad\): qpos_start: DOF 'joint_0'"),
    ({"start": START, "goal": START[:5]}, r"problems\[1\]\.goal \(bad\): qpos_goal must have shape \(6,\) or \(8,\)"),
    ({"start": START, "goal_pose": {"link": "ee_gripper_link", "pos": [0.3, 0, 0.1], "quat": [0, 0, 0, 0]}},
     r"problems\[1\]\.goal_pose \(bad\): .*zero quaternion"),
    ({"start": START, "goal_pose": {"link": "ee_gripper_link", "pos": [0.3, 0, 0.1], "rot_mask": [1, 1, 0]}},
     r"problems\[1\]\.goal_pose: rot_mask \[True, True, False\]: align 0 axes, 1 axis or all 3"),
    ({"start": START, "goal_pose": {"link": "ee_gripper_link", "pos": [0.3, 0, 0.1], "pos_mask": "xyz"}},
     r"problems\[1\]\.goal_pose: pos_mask must be 3 booleans"),
    ({"start": START, "goal": START, "seed": -1}, r"problems\[1\]\.seed: must be an integer in \[0, 4294967295\]"),
])
def test_a_problem_plan_would_refuse_is_refused_before_any_planning_naming_its_key(tmp_path, capsys, problem, words):
    """Goals outside the joint windows, zero quaternions, a negative seed: found only when their turn came (after
    the problems before them were planned, a traceback for the seed), or never (a two-axis rot_mask)."""
    from app.plan import main

    first = {"name": "first", "start": START, "goal": [0.5, *START[1:]]}
    path = _problems_file(tmp_path, first, {"name": "bad", **problem})
    out = tmp_path / "out"
    assert main([str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err and last.startswith(f"error: {path}: ") and re.search(words, last), last
    assert "planning failed" not in err and not out.exists()


@pytest.mark.parametrize("names, words", [(["a/b"], r"problems\[0\]\.name: must be a plain name"),
                                          (["same", "same"], r"problems: names must be unique .* \['same'\] repeat")])
def test_problem_names_are_plain_and_unique(tmp_path, names, words):
    from app.planning.problems import read_problems

    path = _problems_file(tmp_path, *({"name": n, "start": START, "goal": START} for n in names))
    with pytest.raises(ConfigError, match=words):
        read_problems(path)


def test_plan_options_take_only_seeds_numpy_and_ompl_take():
    from app.planning.planner import PlanOptions

    for seed in (-1, 2**32, True):
        with pytest.raises(InputError, match=r"seed must be an integer in \[0, 4294967295\]"):
            PlanOptions(seed=seed)
    assert PlanOptions(seed=2**32 - 1).seed == 2**32 - 1


@pytest.mark.parametrize("contents", [{"notes.txt": "mine"}, {"meta/notes.txt": "mine"}, {"data.csv": "1,2"}])
def test_a_recording_into_a_folder_of_someone_elses_files_is_refused_and_leaves_it_as_it_was(tmp_path, capsys,
                                                                                           contents):
    """A folder that is not a dataset got a dataset written among the user's files (LeRobot refuses such a root)."""
    from app.record import main

    out = tmp_path / "mine"
    for name, text in contents.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert main([str(ROOT / "configs/single_ik.yaml"), "--cameras", "none", "--episodes", "1", "--out", str(out)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{out}: holds [" in last and "a recording starts a new dataset in a new or empty folder" in last, last
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert all((out / name).read_text() == text for name, text in contents.items())


def test_a_recording_into_an_existing_folder_empty_but_for_hidden_files_is_a_new_dataset(tmp_path):
    from app.dataset import load_dataset
    from app.record import main

    out = tmp_path / "empty"
    out.mkdir()
    (out / ".gitkeep").write_text("")  # hidden files do not count
    assert main([str(ROOT / "configs/single_ik.yaml"), "--cameras", "none", "--episodes", "1", "--out", str(out)]) == 0
    assert len(load_dataset(out).episodes) == 1


def _small_dataset(root):
    from app.dataset import EpisodeFrames, LeRobotWriter
    from tests.dataset_helpers import SPEC

    writer = LeRobotWriter(root, SPEC._replace(cameras=()))
    for value in (0.0, 0.1):
        state = np.full((6, 7), value)
        writer.append(EpisodeFrames("pick", state, state.copy(), {}))
    return root


def _set_column(path, column, values):
    table = pq.read_table(path)
    table = table.set_column(table.column_names.index(column), column, pa.array(values, table.schema.field(column).type))
    pq.write_table(table, path)


def test_frames_marked_with_another_episodes_index_are_refused_naming_the_data_file(tmp_path):
    """The data's episode_index column was never read: frames of episode 1 marked 0 replayed as episode 1."""
    from app.dataset import load_dataset

    root = _small_dataset(tmp_path / "ds")
    data = next((root / "data").rglob("*.parquet"))
    _set_column(data, "episode_index", [0] * 8 + [1] * 4)
    with pytest.raises(DatasetError, match=r"file-000\.parquet: the frames of episode 1 are marked episode_index "
                                           r"\[0, 1\]"):
        load_dataset(root)


def test_an_episode_row_given_twice_is_refused_naming_the_episodes_file(tmp_path):
    from app.dataset import load_dataset

    root = _small_dataset(tmp_path / "ds")
    _set_column(next((root / "meta/episodes").rglob("*.parquet")), "episode_index", [0, 0])
    with pytest.raises(DatasetError, match=r"counts 2 episodes \(0 \.\. 1, each once\); the episode rows hold \[0, 0\]"):
        load_dataset(root)


def test_a_v21_episodes_file_with_a_gap_or_a_repeat_is_refused(tmp_path):
    """A v2.1 dataset's episodes.jsonl was sorted and cut at total_episodes: [0, 0] read episode 0 twice."""
    from app.dataset.lerobot_reader import read_lerobot

    root = tmp_path / "v21"
    (root / "meta").mkdir(parents=True)
    (root / "meta/info.json").write_text(json.dumps({
        "codebase_version": "v2.1", "fps": 30, "total_episodes": 2, "chunks_size": 1000,
        "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
        "features": {"observation.state": {"shape": [7]}, "action": {"shape": [7]}}}))
    (root / "meta/episodes.jsonl").write_text('{"episode_index": 0, "length": 2}\n{"episode_index": 0, "length": 2}\n')
    with pytest.raises(DatasetError, match=r"episodes\.jsonl: meta/info.json counts 2 episodes .* hold \[0, 0\]"):
        read_lerobot(root)


@pytest.mark.parametrize("body, words", [({"mass": -1}, r"bodies\.cube: mass: must be > 0 kg, got -1"),
                                         ({"size": [1e9, 0.05, 0.05]}, r"bodies\.cube\.size\[0\]: must be within"),
                                         ({"shape": "torus"}, r"bodies\.cube: shape: 'torus' is not one of"),
                                         ({"colour": [1, 0, 0]}, r"bodies\.cube: unknown keys \['colour'\]")])
def test_a_recorded_scene_line_with_impossible_bodies_is_refused_naming_its_line(tmp_path, body, words):
    """Bodies of mass -1, a 1e9 m cube or an unknown shape were only a 'bodies differ' note."""
    from app.episode.episode_scene import run_scenes
    from app.recording.replay_scene import replay_scene

    run = load_run_config(ROOT / "configs/pick_place.yaml", n_envs=1)
    line = {"episode_index": 0, **run_scenes(run, 1)[0].as_dict(),
            "bodies": {"cube": {"shape": "box", "size": [0.05, 0.05, 0.05], "mass": 0.05} | body}}
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta/episode_scenes.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match=r"episode_scenes\.jsonl line 1: " + words):
        replay_scene(tmp_path, run, 0)
    line["bodies"]["cube"] = {"shape": "box", "size": [0.05, 0.05, 0.05], "mass": 0.05}
    (tmp_path / "meta/episode_scenes.jsonl").write_text(json.dumps(line) + "\n")
    assert replay_scene(tmp_path, run, 0).scene is not None


def test_a_min_separation_no_place_can_keep_is_a_config_error_naming_it():
    """It drew 1000 places, kept the last one too near and reported the run as placed."""
    with pytest.raises(ConfigError, match=r"task\.min_separation: 0\.6 m cannot be met: no point of place_range .* "
                                          r"is farther than 0\.3606 m from any start of 'cube'"):
        load_run_config(ROOT / "configs/pick_place.yaml", sets={"task.min_separation": 0.6})
    assert load_run_config(ROOT / "configs/pick_place.yaml", sets={"task.min_separation": 0.3}).motion


def test_a_place_no_draw_finds_far_enough_from_one_environments_start_is_refused_before_the_run():
    from app.tasks.object_task import ObjectTask, draw_places

    task = ObjectTask(place_range=((0.0, 0.0), (0.1, 0.1)), min_separation=0.12)
    starts = np.array([[0.3, 0.3], [0.05, 0.05]])
    with pytest.raises(InputError, match=r"min_separation: environment 1's object starts at \[0\.05 0\.05\]; "
                                         r"1000 draws .* \(the farthest is 0\.0707 m\)"):
        draw_places(task, starts, seed=0)
    assert np.linalg.norm(draw_places(task, starts[:1], seed=0) - starts[:1], axis=1).min() >= 0.12


@pytest.mark.parametrize("camera, words", [
    ({"name": "wrist", "link": "link_6", "eye": [1.0, 0.0, 1.0]}, r"cameras\[0\]: link \['eye'\] given together"),
    ({"name": "high", "eye": [1.0, 0.0, 1.0], "offset_pos": [0, 0, 0.1]}, r"\['offset_pos'\] place a camera on a link"),
])
def test_camera_keys_that_place_it_twice_are_refused(camera, words):
    """A camera given a link and an eye silently rode on the link, its eye ignored."""
    with pytest.raises(ConfigError, match=words):
        load_run_config(ROOT / "configs/pick_place.yaml", sets={"scene_overrides.cameras": [camera]})


def test_a_table_texture_that_is_not_an_image_is_refused_naming_the_key(tmp_path):
    junk = tmp_path / "junk.png"
    junk.write_bytes(bytes(range(256)) * 20)
    half = tmp_path / "half.png"
    from PIL import Image

    Image.new("RGB", (64, 64), (200, 100, 50)).save(half)
    half.write_bytes(half.read_bytes()[:60])
    for path in (junk, half):
        with pytest.raises(ConfigError, match=r"look\.table_texture: .* nor a PNG or JPEG file \(not an image that "
                                              r"decodes"):
            load_run_config(ROOT / "configs/pick_place.yaml",
                            sets={"scene_overrides.look": {"style": "kit", "table_texture": str(path)}})


def test_arm_joints_named_as_a_grippers_fingers_are_refused():
    """joint_5 as a finger: the gripper took the wrist from the controller."""
    with pytest.raises(ConfigError, match=r"gripper\.joints: \['joint_5'\] move the end effector 'ee_gripper_link': "
                                          r"arm joints"):
        load_run_config(ROOT / "configs/pick_place.yaml",
                        sets={"scene_overrides.robot.gripper.joints": ["joint_5", "right_carriage_joint"]})


def test_an_empty_robots_list_is_refused():
    with pytest.raises(ConfigError, match=r"robots: an empty list; list the robots"):
        load_run_config(ROOT / "configs/pick_place.yaml", sets={"scene_overrides.robots": []})


def test_a_script_row_without_its_position_is_refused():
    """A row without pos went to the default (0.3, 0, 0.15) m."""
    rows = [{"t": 0.0, "pos": [0.3, -0.1, 0.15]}, {"t": 1.0, "gripper": 1.0}]
    with pytest.raises(ConfigError, match=r"task\.waypoints\[1\]: missing key\(s\) \['pos'\]; give \['t', 'pos'\]"):
        load_run_config(ROOT / "configs/script_pick.yaml", sets={"task.waypoints": rows})
    rows[1]["pos"] = [0.3, -0.1, 0.1]
    assert len(load_run_config(ROOT / "configs/script_pick.yaml", sets={"task.waypoints": rows}).motion.waypoints) == 2


def test_a_trajectory_column_no_arm_reads_is_refused_naming_it(tmp_path):
    """A misspelt 'gripepr' column was ignored: the fingers never moved, without a word."""
    from app.dataset.trajectory import read_ee_trajectory

    path = tmp_path / "t.csv"
    path.write_text("t,x,y,z,qw,qx,qy,qz,gripepr\n0,0.3,0,0.2,1,0,0,0,1\n0.5,0.3,0,0.2,1,0,0,0,1\n")
    with pytest.raises(DatasetError, match=r"t\.csv: unknown column\(s\) \['gripepr'\]; a trajectory holds \['gripper'"):
        read_ee_trajectory(path)
    path.write_text("t,x,y,z,qw,qx,qy,qz,gripper\n0,0.3,0,0.2,1,0,0,0,1\n0.5,0.3,0,0.2,1,0,0,0,1\n")
    assert read_ee_trajectory(path).gripper.shape == (2, 1)


def test_a_number_yaml_reads_as_text_is_named_with_how_to_write_it(tmp_path):
    """PyYAML reads 1e-1 as the string '1e-1': 'expected a number, got '1e-1'' left the user puzzled."""
    text = (ROOT / "configs/single_ik.yaml").read_text().replace("scene: scenes/", f"scene: {ROOT}/scenes/")
    path = tmp_path / "run.yaml"
    path.write_text(text + "\nduration: 5e-1\n" if "duration:" not in text else
                    re.sub(r"duration: .*", "duration: 5e-1", text))
    with pytest.raises(ConfigError, match=r"duration: expected a number, got '5e-1' \(YAML reads 5e-1 as text; write "
                                          r"5\.0e-1: a decimal point and a signed exponent\)"):
        load_run_config(path)


@pytest.mark.parametrize("kwargs, words", [({"dt": 10.0}, r"dt must be a physics step in \[0\.0001, 1\] s"),
                                           ({"gravity": (0.0, 0.0, float("nan"))}, r"gravity contains NaN"),
                                           ({"gravity": (0.0, -9.81)}, r"gravity must be one point of shape \(3,\)")])
def test_a_scene_takes_only_physics_steps_and_gravity_it_can_simulate(kwargs, words):
    """dt=10 s and NaN gravity were accepted (NaN states from the first step); a 2-vector was a TypeError."""
    from app.sim.scene import Scene

    with pytest.raises(InputError, match=words):
        Scene(**kwargs)


@pytest.mark.parametrize("inside", [".", "meta", "data/new"])
def test_a_replay_into_its_own_dataset_is_refused_and_leaves_the_dataset_as_it_was(tmp_path, capsys, inside):
    """--out DATASET wrote replay.json, .png and .mp4 into the dataset's root or its meta/."""
    from app.replay import main

    root = _small_dataset(tmp_path / "ds")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert main([str(root), "--out", str(root / inside), "--no-video"]) == 2
    assert "inside the dataset" in capsys.readouterr().err.strip().splitlines()[-1]
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before and not (root / "data/new").exists()


def test_an_act_rate_for_a_lerobot_dataset_is_refused(tmp_path, capsys):
    """--act-fps 30 on a LeRobot dataset was ignored without a word."""
    from app.replay import main

    root = _small_dataset(tmp_path / "ds")
    assert main([str(root), "--act-fps", "30", "--out", str(tmp_path / "out"), "--no-video"]) == 2
    assert "--act-fps 30: only for ACT HDF5 files; this lerobot-v3.0 dataset" in capsys.readouterr().err


@pytest.mark.parametrize("extra, words", [(["--depth", "--cameras", "none"], "--depth asks for cameras, but with "
                                           "--cameras none no camera records"),
                                          (["--camera-size", "320x240", "--cameras", "config"],
                                           "--camera-size asks for cameras, but with --cameras config (the config "
                                           "names none)")])
def test_camera_options_with_no_camera_to_apply_to_are_refused(tmp_path, capsys, extra, words):
    """--depth with --cameras none recorded a dataset without depth, and said nothing."""
    from app.record import main

    out = tmp_path / "ds"
    assert main([str(ROOT / "configs/single_ik.yaml"), "--episodes", "1", "--out", str(out), *extra]) == 2
    assert words in capsys.readouterr().err.strip().splitlines()[-1] and not out.exists()


@pytest.mark.parametrize("body, words", [
    (" []\n", "collision_spheres.link_6: an empty list; give the link's spheres, or leave the link out"),
    ("\n    - {center: [0, 0, 0], radius: 1.0e+9}\n", "collision_spheres.link_6[0]: a sphere of radius 1e+09 m"),
    ("\n    - {center: [1.0e+9, 0, 0], radius: 0.02}\n", "a link's sphere is at most 2 m in radius and 5 m from its frame"),
])
def test_a_sphere_file_link_with_no_spheres_or_a_sphere_of_kilometres_is_refused(tmp_path, body, words):
    """An empty list was a numpy ValueError while the model was built; a 1e9 m sphere collided with everything."""
    from app.collision.sphere_file import read_sphere_file

    path = tmp_path / "r.spheres.yaml"
    path.write_text("collision_spheres:\n  link_6:" + body)
    with pytest.raises(ConfigError, match=re.escape(words)):
        read_sphere_file(path, ("link_6",))


def test_objects_that_would_start_inside_each_other_are_refused_and_touching_ones_are_not():
    """Two cubes at one point were accepted: PyBullet threw them apart at the first step."""
    cube = {"name": "cube", "size": [0.05, 0.05, 0.05], "pos": [0.3, 0.0, 0.025]}
    inside = {"name": "c2", "size": [0.05, 0.05, 0.05], "pos": [0.32, 0.01, 0.025], "yaw": 0.7}
    with pytest.raises(ConfigError, match=r"objects\[1\]\.pos: object 'c2' at \[0\.32, 0\.01, 0\.025\] would start "
                                          r"inside object 'cube'"):
        load_run_config(ROOT / "configs/pick_place.yaml", sets={"scene_overrides.objects": [cube, inside]})
    touching = {**inside, "pos": [0.35, 0.0, 0.025], "yaw": 0.0}
    assert len(load_run_config(ROOT / "configs/pick_place.yaml",
                               sets={"scene_overrides.objects": [cube, touching]}).scene_config.objects) == 2


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["boxes"][0].update(half=[-0.4, 0.35, 0.02]), r"boxes\[0\]: table\.half must be > 0 .* got \[-0\.4,"),
    (lambda d: d["boxes"][0].update(quat=[0, 0, 0, 0]), r"boxes\[0\]: table\.quat must be a nonzero"),
    (lambda d: d["boxes"][0].update(half=[1e9, 1, 1]), r"boxes\[0\]\.half: must be within \+-1e\+06"),
    (lambda d: d["boxes"].append(dict(d["boxes"][0])), r"boxes\[2\]\.name: 'table' names an earlier box too"),
    (lambda d: d["options"].update(min_distance=50.0), r"options: min_distance must be a clearance in \[0, 1\] m"),
    (lambda d: d["options"].update(shortcut_attempts=10**9), r"options: shortcut_attempts must be in \[0, 10000\]"),
])
def test_a_problems_files_boxes_and_options_are_checked_naming_the_file_and_key(tmp_path, edit, words):
    """Bad boxes named neither the file nor the key (and printed np.float64(...)); min_distance 50 m was refused
    only by the collision model, naming 'margins'; 1e9 shortcut attempts ran on for ever."""
    import yaml

    from app.planning.problems import read_problems

    data = yaml.safe_load(PROBLEMS.read_text())
    data["robot"] = str(ROOT / "assets" / "urdf" / "widowx_ai.urdf")
    edit(data)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}: " + words):
        read_problems(path)
