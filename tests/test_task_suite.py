"""The task suite (app/tasks): every task's expert succeeds in its own run file, each task's evaluate gives its own
words for its failures, bad task values are one-line errors naming the key, and ``app.eval --list-tasks`` lists
every task with a run file that loads."""

from __future__ import annotations

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.errors import ConfigError
from app.evaluation.task_list import task_rows
from app.tasks import MANIPULATION, TaskState
from tests.conftest import ROOT
from tests.golden_runs import run_to_end

NEW_TASKS = ("stack", "place_in_bin", "push", "peg_in_hole", "bimanual_lift", "bimanual_insertion")


def state(n: int = 1, **given) -> TaskState:
    """A step's TaskState for ``n`` environments: an object resting released at (0.3, 0, 0.025), untouched, no
    history; ``given`` replaces fields (arrays broadcast to n)."""
    base = {"obj_pos": [0.3, 0.0, 0.025], "obj_speed": 0.0, "touched": False, "held": False, "held_all": False,
            "obj_quat": [1.0, 0.0, 0.0, 0.0], "released": True, "collided": False, "start_z": 0.025,
            "place": [0.3, 0.0], "best": 0, "ever_collided": False, "moved": 0.0, "ever_lifted": False, "others": None}
    base.update(given)
    out = {}
    for k, v in base.items():
        out[k] = v if k == "others" or v is None else np.broadcast_to(np.asarray(v), (n,) + np.shape(v)).copy()
    return TaskState(**out)


def task(name: str, **values):
    return MANIPULATION[name](**values)


@pytest.mark.parametrize("name", NEW_TASKS)
def test_each_new_tasks_expert_succeeds_in_its_run_file_as_the_task_judges_it(name):
    run = load_run_config(ROOT / MANIPULATION[name].config, n_envs=2)
    result, _ = run_to_end(run)
    assert [(e["success"], e["reason"]) for e in result.episodes] == [(True, "")] * 2, result.episodes


def test_stack_is_judged_against_where_the_base_is_now():
    stack = task("stack")
    on = state(obj_pos=[0.3, 0.0, 0.075], best=3, others={"base_cube": np.array([[0.305, 0.0, 0.03, 1, 0, 0, 0]])})
    assert stack.evaluate(on).success[0]
    beside = on._replace(obj_pos=np.array([[0.3, 0.08, 0.025]]))
    assert stack.evaluate(beside).reason == ["not_stacked"]
    moved_base = on._replace(others={"base_cube": np.array([[0.35, 0.0, 0.03, 1, 0, 0, 0]])})  # knocked away beneath it
    assert stack.evaluate(moved_base).reason == ["not_stacked"]


def test_place_in_bin_counts_only_inside_the_walls():
    bin_task = task("place_in_bin", bin_pos=(0.35, 0.14), bin_inner=(0.12, 0.12))
    inside = state(obj_pos=[0.38, 0.17, 0.025], best=3)
    assert bin_task.evaluate(inside).success[0]
    assert bin_task.evaluate(inside._replace(obj_pos=np.array([[0.35, 0.21, 0.025]]))).reason == ["outside_bin"]
    on_rim = inside._replace(obj_pos=np.array([[0.35, 0.14, 0.06]]))  # above the 4 cm walls: not in
    assert bin_task.evaluate(on_rim).reason == ["outside_bin"]
    assert [f.name for f in bin_task.fixtures()] == ["bin_wall_x-", "bin_wall_x+", "bin_wall_y-", "bin_wall_y+"]


def test_peg_in_hole_is_judged_by_depth_and_a_peg_stuck_over_the_block_is_jammed():
    peg = task("peg_in_hole", hole_pos=(0.35, 0.12), insert_depth=0.03)
    inserted = state(obj_pos=[0.351, 0.12, 0.05], start_z=0.05, best=3)  # bottom on the table: 4 cm deep
    assert peg.evaluate(inserted).success[0]
    shallow = inserted._replace(obj_pos=np.array([[0.351, 0.12, 0.075]]))  # 1.5 cm deep
    assert peg.evaluate(shallow).reason == ["jammed"]
    still_held = shallow._replace(released=np.array([False]), touched=np.array([True]))
    assert peg.evaluate(still_held).reason == ["jammed"]
    elsewhere = inserted._replace(obj_pos=np.array([[0.2, -0.1, 0.05]]))
    assert peg.evaluate(elsewhere).reason == ["misplaced"]


def test_push_succeeds_only_without_lifting_and_names_each_failure():
    push = task("push")
    there = state(obj_pos=[0.31, 0.0, 0.025], place=[0.3, 0.0], moved=0.1, best=2)
    assert push.evaluate(there).success[0]
    assert push.evaluate(there._replace(ever_lifted=np.array([True]))).reason == ["grasped"]
    assert push.evaluate(there._replace(obj_pos=np.array([[0.5, 0.0, -0.2]]))).reason == ["pushed_off_table"]
    assert push.evaluate(there._replace(obj_pos=np.array([[0.36, 0.0, 0.025]]))).reason == ["missed_target"]
    assert push.evaluate(state(place=[0.4, 0.0])).reason == ["not_touched"]
    assert push.evaluate(there._replace(collided=np.array([True]))).reason == ["collision"]


def test_bimanual_lift_needs_both_grippers_height_and_level():
    lift = task("bimanual_lift", min_lift=0.05, max_tilt=0.1745)
    up = state(obj_pos=[0.0, 0.0, 0.09], start_z=0.02, held=True, held_all=True, touched=True, released=False,
               best=3)
    assert lift.evaluate(up).success[0]
    tilt = np.radians(20)  # about the bar's y axis: its long x axis out of level
    tilted = up._replace(obj_quat=np.array([[np.cos(tilt / 2), 0.0, np.sin(tilt / 2), 0.0]]))
    assert lift.evaluate(tilted).reason == ["tilted"]
    one = up._replace(held_all=np.array([False]), best=np.array([2]))
    assert lift.evaluate(one).reason == ["one_arm"]
    assert lift.evaluate(up._replace(held_all=np.array([False]))).reason == ["dropped"]
    assert lift.evaluate(up._replace(obj_pos=np.array([[0.0, 0.0, 0.03]]))).reason == ["not_lifted"]


def test_bimanual_insertion_counts_the_peg_in_only_when_its_tip_is_deep_in_the_bore():
    ins = task("bimanual_insertion", min_depth=0.02, min_lift=0.05)
    along_y = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]  # both parts' x axes along the world's y

    def peg_at(y, z=0.14):
        return {"peg": np.array([[0.0, y, z, *along_y]])}

    # the socket (8 cm, centred at y = 0.055) held up; the peg (14 cm) with its tip 3 cm past the mouth at y = 0.015
    up = state(obj_pos=[0.0, 0.055, 0.14], obj_quat=along_y, start_z=0.02, held=True, held_all=True, touched=True,
               released=False, best=3, others=peg_at(-0.025))
    assert ins.evaluate(up).success[0]
    assert ins.evaluate(up._replace(others=peg_at(-0.045))).reason == ["misaligned"]  # 1 cm in: not enough
    assert ins.evaluate(up._replace(others=peg_at(-0.025, z=0.155))).reason == ["misaligned"]  # beside the bore
    assert ins.evaluate(up._replace(held_all=np.array([False]))).reason == ["dropped"]
    low = up._replace(obj_pos=np.array([[0.0, 0.055, 0.04]]), others=peg_at(-0.025, z=0.04))
    assert ins.evaluate(low).reason == ["not_lifted"]


@pytest.mark.parametrize("config, key, value, words", [
    ("peg_in_hole", "task.clearance", 0.01, "task.clearance: must be in (0, 0.005] m"),
    ("stack", "task.base", "nothing", "'nothing' must be another object of the scene"),
    ("place_in_bin", "task.lift_height", 0.03, "must be above the walls' 0.04 m"),
    ("push", "task.max_pushes", 0, "task.max_pushes: must be 1..20"),
    ("bimanual_lift", "task.arms", ["left", "left"], "two different arms"),
    ("bimanual_insertion", "task.peg_length", 0.1, "must be 'peg''s size along x"),
])
def test_a_bad_task_value_is_one_error_naming_the_file_and_key(config, key, value, words):
    with pytest.raises(ConfigError) as err:
        load_run_config(ROOT / MANIPULATION[config].config, sets={key: value})
    assert f"{config}.yaml" in str(err.value) and words in str(err.value), str(err.value)


def test_list_tasks_names_every_task_with_a_run_file_that_loads_and_its_measured_expert():
    rows = task_rows()
    assert sorted(r["task"] for r in rows) == sorted(MANIPULATION) and set(NEW_TASKS) <= set(MANIPULATION)
    for row in rows:
        run = load_run_config(ROOT / row["config"])
        assert run.motion.type == row["task"]
        assert row["expert"] == "not measured" or "/" in row["expert"]


@pytest.mark.parametrize("name", sorted(MANIPULATION))
def test_every_tasks_drawn_scene_reads_back_as_a_recording_keeps_it(name):
    """What app.record writes of an episode's scene (meta/episode_scenes.jsonl) loads again for a replay: a URDF
    object (the insertion's socket), whose size only PyBullet knows, is not judged against the table top."""
    from app.episode.episode_scene import EpisodeScene, draw_scene

    run = load_run_config(ROOT / MANIPULATION[name].config, n_envs=1)
    for seed in range(3):
        drawn = draw_scene(run, seed)
        back = EpisodeScene.from_dict(drawn.as_dict(), run, "episode_scenes.jsonl line 1")
        assert back.place is not None and np.allclose(back.place, drawn.place)


def test_a_place_target_moved_during_the_run_is_the_one_the_task_judges():
    """The GUI's sliders move a pick's place target while it runs (motion.place); the report's success is judged
    against the moved target, where the expert put the cube."""
    from app.episode.loop import final_state, simulate
    from app.episode.motion_factory import run_motion
    from app.episode.scene_build import build_scene

    run = load_run_config(ROOT / "configs/pick_place.yaml", n_envs=1)
    scene, robot = build_scene(run)
    try:
        motion = run_motion(run, robot.n_envs, robot=robot)
        moved = motion.place[0, :2] + [0.0, 0.06 if motion.place[0, 1] < 0 else -0.06]

        def move_once(k, controller, q):
            if k == 1:
                motion.place[0, :2] = moved
            return False

        episode, _ = simulate(run, scene, robot, motion, on_tick=move_once, show_progress=False)
        (ep,) = final_state(run, robot, episode, motion, scene.t, scene=scene).episodes
    finally:
        scene.close()
    assert ep["success"] and ep["reason"] == "", ep
    assert np.linalg.norm(np.asarray(ep["object_final_pos"])[:2] - moved) < 0.01


def test_a_damaged_measurements_file_is_one_error_naming_it_and_the_script_that_writes_it(tmp_path):
    from app.errors import InputError

    bad = tmp_path / "expert_success.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"expert_success.json: not the benchmark's JSON .* scripts/bench_tasks.py"):
        task_rows(bad)
    assert {r["expert"] for r in task_rows(tmp_path / "absent.json")} == {"not measured"}


def test_a_second_task_under_a_taken_type_is_refused_naming_both_classes():
    from dataclasses import dataclass
    from typing import ClassVar

    from app.errors import InputError
    from app.tasks import register_task
    from app.tasks.pick_place import PickPlaceTask

    @dataclass(frozen=True)
    class AnotherStack(PickPlaceTask):
        type: ClassVar[str] = "stack"

    with pytest.raises(InputError, match=r"task type 'stack' is taken by app\.tasks\.stack\.StackTask"):
        register_task(AnotherStack)
    assert MANIPULATION["stack"].__name__ == "StackTask"
