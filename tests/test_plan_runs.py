"""Planning in the app (#36 item 5): a pick-and-place whose free-space moves are planned, the plan task, their
failure reasons in the report, the summary and the caption, the tracks the controllers follow, and repeatable
plans (OMPL reseeded per search: a search depends on its seed alone, in any process)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from app.collision import World, WorldBox
from app.config.loader import load_run_config
from app.control.phases import PLAN_REASONS, REASONS, code_label
from app.control.planner_config import PLANNER_NAMES
from app.control.segments import Segments
from app.control.tracks import Track, TrackedSegments
from app.episode.motion_factory import run_motion
from app.episode.planned_moves import move_seed
from app.episode.run_report import pick_summary, plan_summary
from app.episode.scene_build import build_scene
from app.errors import ConfigError
from app.planning import PLANNERS, PlanOptions, plan
from tests.conftest import ROOT
from tests.golden_runs import run_to_end

SHELF = ROOT / "configs" / "pick_shelf.yaml"
PLAN = ROOT / "configs" / "plan_shelf.yaml"
WALL = World(boxes=(WorldBox("table", (0.4, 0.35, 0.02), (0.25, 0.0, -0.02)),
                    WorldBox("shelf", (0.15, 0.01, 0.08), (0.35, 0.0, 0.08))))
START = [-0.5, 1.5, 0.9, -0.4, 0.0, 0.0, 0.044, 0.044]
GOAL = [0.5, 1.5, 0.9, -0.4, 0.0, 0.0, 0.044, 0.044]
SCRIPT = f"""
import json, numpy as np
from app import RobotModel
from app.collision import World, WorldBox
from app.planning import PlanOptions, plan
m = RobotModel.from_urdf({str(ROOT / 'assets/urdf/widowx_ai.urdf')!r})
w = World(boxes=(WorldBox("table", (0.4, 0.35, 0.02), (0.25, 0.0, -0.02)),
                 WorldBox("shelf", (0.15, 0.01, 0.08), (0.35, 0.0, 0.08))))
r = plan(m, np.array({GOAL}), np.array({START}), world=w, options=PlanOptions(seed=11, smooth_path=False))
print(json.dumps(r.path.tolist()))
"""


def test_planner_names_of_the_task_section_are_app_plannings():
    """The task's planner: section offers exactly app.planning's planners (control does not import planning)."""
    assert set(PLANNER_NAMES) == set(PLANNERS)


def test_a_search_gives_the_same_path_for_its_seed_after_other_searches_and_in_another_process(widowx):
    """RRT-Connect's raw path for seed 11: the same before and after a search with another seed in this process,
    and in a fresh process (OMPL's seed generator is reset before every search)."""
    opts = PlanOptions(seed=11, smooth_path=False)
    first = plan(widowx, np.array(GOAL), np.array(START), world=WALL, options=opts)
    plan(widowx, np.array(GOAL), np.array(START), world=WALL, options=PlanOptions(seed=5, smooth_path=False))
    again = plan(widowx, np.array(GOAL), np.array(START), world=WALL, options=opts)
    assert first.success and len(first.path) > 2  # the wall is in the way: not one straight edge
    np.testing.assert_array_equal(first.path, again.path)
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, check=True)
    np.testing.assert_array_equal(first.path, np.array(json.loads(out.stdout.strip().splitlines()[-1])))


def test_move_seeds_depend_on_the_environments_index_in_the_whole_run_only():
    """A worker's block plans environment 7 with the seed the whole run gives it; moves and repeats differ."""
    run = load_run_config(SHELF)
    s = run.motion.planner
    assert move_seed(0, s, 7, "carry", 0) == move_seed(0, s, 7, "carry", 0)
    assert len({move_seed(0, s, 7, "carry", 0), move_seed(0, s, 8, "carry", 0), move_seed(0, s, 7, "pre_grasp", 0),
                move_seed(0, s, 7, "carry", 1), move_seed(1, s, 7, "carry", 0)}) == 5


def _track(p0, p1, n=11, rate=100.0):
    s = np.linspace(0.0, 1.0, n)[:, None]
    pos = np.asarray(p0) + s * (np.asarray(p1) - np.asarray(p0))
    return Track(pos, np.repeat(np.eye(3)[None], n, 0), np.gradient(pos, 1 / rate, axis=0), np.zeros((n, 8)), rate)


def test_segments_follow_a_track_and_leave_it_from_where_its_target_is():
    """follow: the targets are the track's (interpolated between samples), done at its end, the goal its last
    pose; a straight segment started mid-track starts at the track's target then; the others are untouched."""
    seg = TrackedSegments(np.zeros((2, 3)), np.repeat(np.eye(3)[None], 2, 0), 0.25, 1.0, 2.0)
    plain = Segments(np.zeros((2, 3)), np.repeat(np.eye(3)[None], 2, 0), 0.25, 1.0, 2.0)
    seg.follow(0, 1.0, _track([0, 0, 0], [0.1, 0, 0]))
    pos, _, vel = seg.at(1.05)
    np.testing.assert_allclose(pos[0], [0.05, 0, 0], atol=1e-12)
    np.testing.assert_allclose(vel[0], [1.0, 0, 0], atol=1e-9)
    np.testing.assert_array_equal(pos[1], plain.at(1.05)[0][1])
    assert not seg.done(1.09)[0] and seg.done(1.1)[0]
    np.testing.assert_allclose(seg.p1[0], [0.1, 0, 0])
    seg.move_to(np.array([0]), 1.03, np.array([[0.0, 0.2, 0.0]]), np.eye(3)[None])
    np.testing.assert_allclose(seg.at(1.03)[0][0], [0.03, 0, 0], atol=1e-12)  # no jump where it left the track
    assert seg.tracks[0] is None


def _write(tmp_path, text: str):
    path = tmp_path / "run.yaml"
    path.write_text(text.replace("scene: scenes/", f"scene: {ROOT}/scenes/"))
    return path


def test_an_unknown_planner_key_or_name_is_an_error_naming_the_file_and_key(tmp_path):
    text = SHELF.read_text()
    with pytest.raises(ConfigError, match=r"run\.yaml: task\.planner: unknown key 'timout'.*timeout"):
        load_run_config(_write(tmp_path, text.replace("    timeout: 1.0", "    timout: 1.0")))
    with pytest.raises(ConfigError, match=r"run\.yaml: task\.planner\.planner: unknown planner 'RRTconnect'.*BITstar"):
        load_run_config(_write(tmp_path, text.replace("planner: RRTConnect", "planner: RRTconnect")))
    with pytest.raises(ConfigError, match=r"task\.planner\.moves: distinct moves of"):
        load_run_config(_write(tmp_path, text.replace("moves: [pre_grasp, carry]", "moves: [grasp]")))


@pytest.mark.parametrize("key, value, words", [
    ("acceleration", 1e-9, "task.planner.acceleration: 1e-09 rad/s^2 would take a move across a joint's range"),
    ("jerk", 1e-12, "task.planner.jerk: 1e-12 rad/s^3 would take"),
    ("velocity_scale", 1e-9, "task.planner.velocity_scale: must be at least 0.01"),
    ("seed", 2**32, "task.planner.seed: must be an integer in [0, 4294967295], got 4294967296"),
    ("seed", -1, "task.planner.seed: must be an integer in [0, 4294967295], got -1"),
])
def test_timing_bounds_that_imply_endless_moves_are_refused_by_the_config_check(key, value, words):
    """acceleration 1e-9 passed the check, then app.run planned for minutes, grew to 2.85 GB, ignored SIGTERM."""
    with pytest.raises(ConfigError) as err:
        load_run_config(SHELF, sets={f"task.planner.{key}": value})
    assert words in str(err.value)


def _pick(sets: dict):
    return run_to_end(load_run_config(SHELF, sets=sets))


def _plan_motion(sets: dict):
    """The plan task's motion for ``sets`` (planned as it is built) and the robot it was planned for."""
    run = load_run_config(PLAN, sets=sets)
    scene, robot = build_scene(run)
    try:
        return run, robot, run_motion(run, 1, robot=robot)
    finally:
        scene.close()


def test_a_plan_that_fails_fails_the_pick_with_the_planners_reason_in_report_summary_and_caption():
    """A clearance the start cannot keep: the pre-grasp's plan fails with start_in_collision, which is the
    episode's reason, the summary's failure and the caption's word; the plan's stats say why."""
    result, motion = _pick({"n_envs": 1, "duration": 0.5, "task.planner.min_distance": 0.2})
    (ep,) = result.episodes
    assert not ep["success"] and ep["expert_reason"] == "start_in_collision"
    assert ep["plans"][0]["move"] == "pre_grasp" and ep["plans"][0]["reason"] == "start_in_collision"
    assert "closest pair" in ep["plans"][0]["detail"]
    assert pick_summary(result.episodes)["expert_failed"] == {"start_in_collision": [0]}
    assert code_label(int(motion.codes()[0])) == "start_in_collision"
    assert set(PLAN_REASONS) <= set(REASONS)


@pytest.fixture(scope="module")
def shelf_runs():
    """Two runs of the planned pick behind the shelf, 2 environments, in this process."""
    return [_pick({"n_envs": 2}) for _ in range(2)]


def test_planned_pick_places_behind_the_shelf_and_reports_each_move(shelf_runs):
    """Both environments place their cube on the far side of the panel; each planned move reports its planning
    time, path length and a clearance from the world of at least the planner's min_distance (by the spheres)."""
    result, _ = shelf_runs[0]
    assert [ep["success"] for ep in result.episodes] == [True, True]
    for ep in result.episodes:
        assert [p["move"] for p in ep["plans"]] == ["pre_grasp", "carry"]
        for p in ep["plans"]:
            assert p["success"] and p["planning_s"] > 0 and p["path_length_rad"] > 0
            assert p["clearance_world_min_m"] >= 0.03 - 1e-9  # configs/pick_shelf.yaml's min_distance
        assert ep["plans"][1]["closest_world_pair"]  # a name pair, e.g. the held cube and the shelf


def test_every_planned_path_is_clear_by_pybullets_closest_points(shelf_runs):
    """The referee (app.sim.path_check: PyBullet's closest points between the arm's real shapes and the table and
    shelf, and between the arm's own links) along every followed track's joints at 1 mrad steps: no contact."""
    from app.collision import World
    from app.episode.planned_moves import SceneMover
    from app.sim.path_check import PyBulletReferee

    _, motion = shelf_runs[0]
    assert sorted(m for _, m, _ in motion.followed) == ["carry", "carry", "pre_grasp", "pre_grasp"]
    collision = motion.mover.collision
    assert isinstance(motion.mover, SceneMover) and isinstance(collision.world, World)
    with PyBulletReferee(motion.model, collision) as referee:
        for _, _, track in motion.followed:
            assert referee.check_path(track.q, step=1e-3) is None


def test_two_planned_runs_are_the_same(shelf_runs):
    """The same config twice in one process: the same plans (seeds, lengths) and final joints."""
    (a, _), (b, _) = shelf_runs
    np.testing.assert_array_equal(a.q_final, b.q_final)
    assert [[(p["seed"], p["path_length_rad"]) for p in ep["plans"]] for ep in a.episodes] == \
        [[(p["seed"], p["path_length_rad"]) for p in ep["plans"]] for ep in b.episodes]


def test_plan_task_plans_every_goal_and_ends_at_the_last():
    """The plan task's moves (two poses across the panel, then joints) all planned; the track ends at rest at
    the FK of the last goal's joints; the first move ends at its pose goal."""
    run, _, motion = _plan_motion({"n_envs": 1})
    (out,) = motion.outcomes()
    assert out["success"] and [m["goal"] for m in out["moves"]] == [0, 1, 2]
    track = motion.tracks[0]
    q_last = np.array(run.motion.goals[2].joints)
    np.testing.assert_allclose(track.q[-1, :6], q_last, atol=1e-9)
    np.testing.assert_allclose(track.vel[-1], 0.0)
    first_end = np.flatnonzero(np.linalg.norm(track.pos - np.array(run.motion.goals[0].pos), axis=1) < 1e-6)
    assert len(first_end)  # the first pose goal is on the track
    assert plan_summary(motion.outcomes())["planned"] == 1
    assert code_label(int(motion.codes()[0])) == "moving"


def test_plan_task_goal_in_collision_holds_and_says_why():
    """A joint goal into the table: goal_in_collision, the environment holds at its start, no later move."""
    bad = {"joints": [0.0, 2.2, 0.2, 0.0, 0.0, 0.0]}
    _, robot, motion = _plan_motion({"n_envs": 1, "task.goals": [bad, {"joints": [0.0, 1.2, 1.0, -0.3, 0.0, 0.0]}]})
    (out,) = motion.outcomes()
    assert not out["success"] and out["reason"] == "goal_in_collision" and len(out["moves"]) == 1
    np.testing.assert_allclose(motion.tracks[0].q[-1], robot.initial_qpos[0])
    assert plan_summary(motion.outcomes())["plan_failed"] == {"goal_in_collision": [0]}
    motion(1.0)
    assert code_label(int(motion.codes()[0])) == "goal_in_collision"


def test_the_video_draws_each_planned_path_and_nothing_for_an_environment_without_one():
    """draw_overlay with paths: cyan pixels along environment 0's path, none where environment 1 has NaN rows;
    polylines gives the tracks' points, its last sample last."""
    from app.control.tracks import polylines
    from app.render.framing import CameraView
    from app.render.overlay import PATH_RGB, FrameOverlay, OverlayStyle, draw_overlay

    view = CameraView(np.array([0.0, -1.0, 0.5]), np.zeros(3), 45.0, 320, 240)
    track = _track([-0.2, 0.0, 0.0], [0.2, 0.0, 0.2], n=101)
    paths = polylines([track, None], points=16)
    assert np.isnan(paths[1]).all() and np.allclose(paths[0, -1], [0.2, 0.0, 0.2]) and paths.dtype == np.float32
    frame = FrameOverlay("t", 0.0, np.full((2, 1, 3), 5.0), np.tile(np.eye(3), (2, 1, 1, 1)), np.zeros(2, int),
                         np.full((2, 3), 5.0), paths=paths)
    style = OverlayStyle.for_view(view, [("reached", (0, 200, 0))])
    image = draw_overlay(np.zeros((240, 320, 3), np.uint8), view, frame, style)
    cyan = (image == np.array(PATH_RGB, np.uint8)).all(axis=-1)
    px, _ = view.project(paths[0].astype(float))
    assert cyan.sum() > 50
    for x, y in px[[0, 8, 15]].round().astype(int):
        assert cyan[max(0, y - 3):y + 4, max(0, x - 3):x + 4].any()
    blank = draw_overlay(np.zeros((240, 320, 3), np.uint8), view, frame._replace(paths=paths[1:]), style)
    assert not (blank == np.array(PATH_RGB, np.uint8)).all(axis=-1).any()


def test_planned_handover_moves_both_arms_together_and_carries_over_the_panel_past_the_other_arm():
    """configs/handover_wall.yaml, 2 environments: both hand the cube over the panel and place it; the first move
    is one plan over both arms, the carry to the meeting point moves the giver alone; every planned path keeps the
    min_distance from the other arm (the sphere model's arm pairs) and the world (the panel, the held cube); the
    drawn paths of both arms."""
    result, motion = run_to_end(load_run_config(ROOT / "configs" / "handover_wall.yaml", sets={"n_envs": 2}))
    assert [ep["success"] for ep in result.episodes] == [True, True]
    for ep in result.episodes:
        assert [(p["move"], p["arms"]) for p in ep["plans"]] == [("pre_grasp", ["giver", "taker"]), ("to_meet", ["giver"])]
        for p in ep["plans"]:
            assert p["clearance_arms_min_m"] >= 0.02 - 1e-9 and p["clearance_world_min_m"] >= 0.02 - 1e-9
    assert motion.paths.shape[1] == 2 * 48 + 1 and np.isnan(motion.paths[:, 48]).all()


def test_a_planned_retreat_starts_beside_the_table_with_the_clearance_it_has():
    """moves with retreat: the fingers start a few mm from the table, closer than min_distance; the retreat keeps
    90 % of that start clearance instead, is planned and the pick succeeds."""
    result, _ = _pick({"n_envs": 1, "task.planner.moves": ["pre_grasp", "carry", "retreat"]})
    (ep,) = result.episodes
    assert ep["success"], ep["expert_reason"]
    retreat = ep["plans"][-1]
    assert retreat["move"] == "retreat" and retreat["success"]
    assert 0.0 < retreat["clearance_world_min_m"] < 0.03


@pytest.mark.parametrize("goals, message", [
    ([{"joints": [0.0] * 6, "pos": [0.3, 0.0, 0.1]}], r"task\.goals\[0\]: give joints or pos"),
    ([{"joints": [0.0] * 5}], r"task\.goals\[0\]\.joints: needs 8 or 6 values, got 5"),
    ([], r"task\.goals: needs at least one goal"),
    ([{"pos": [0.3, 0.0, 0.1], "qaut": [1, 0, 0, 0]}], r"task\.goals\[0\]: unknown key 'qaut'"),
])
def test_a_bad_plan_goal_is_an_error_naming_the_file_and_key(tmp_path, goals, message):
    import yaml

    data = yaml.safe_load(PLAN.read_text())
    data["scene"] = str(ROOT / data["scene"])
    data["task"]["goals"] = goals
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"plan\.yaml: " + message):
        load_run_config(path)


def test_the_gui_window_draws_a_planned_path_once_per_change(monkeypatch):
    """Window.points: the finite points of a path as one set of dots, drawn again only when the path changes,
    removed when it is gone (PyBullet's debug items, counted on a DIRECT client)."""
    import pybullet as pb

    from app.sim.window import Window

    calls = {"add": [], "remove": []}
    monkeypatch.setattr(pb, "addUserDebugPoints", lambda pts, rgb, size, **kw: calls["add"].append(pts) or 7)
    monkeypatch.setattr(pb, "removeUserDebugItem", lambda item, **kw: calls["remove"].append(item))
    client = pb.connect(pb.DIRECT)
    try:
        window = Window(client)
        path = np.array([[0.0, 0.0, 0.1], [np.nan] * 3, [0.1, 0.0, 0.2]])
        window.points("planned path", path)
        window.points("planned path", path.copy())
        assert calls == {"add": [[[0.0, 0.0, 0.1], [0.1, 0.0, 0.2]]], "remove": []}
        window.points("planned path", np.full((3, 3), np.nan))
        assert calls["remove"] == [7] and len(calls["add"]) == 1
    finally:
        pb.disconnect(client)
