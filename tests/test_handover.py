"""A cube handed from one arm to the other in PyBullet (configs/handover.yaml): success per environment, the
poses each arm is sent to, and every failure reason provoked by its cause (a meeting point out of reach, a
cube too wide for the hands, a weak taker, the cube taken away before the giver closes, too little time)."""

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.episode.loop import final_state, simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.ik.limits.distance import GraspState
from app.kinematics.rotations import axis_vector
from app.tasks.handover_poses import HandoverPoses, frame, level_closing
from tests.conftest import ROOT

CONFIG = ROOT / "configs" / "handover.yaml"
ONE = {"n_envs": 1, "scene_overrides.objects": [{"name": "cube", "size": [0.06, 0.06, 0.06], "mass": 0.05,
                                                 "pos": [0.02, 0.25, 0.03]}],
       "task.place_range": None, "task.place_pos": [0.0, -0.24], "duration": 12.0}


def run_handover(sets: dict, on_tick=None):
    """(the run's result, the motion) of the hand-over config with ``sets``; ``on_tick(k, motion, scene)``."""
    run = load_run_config(CONFIG, sets={**ONE, **sets})
    scene, robot = build_scene(run)
    try:
        motion = run_motion(run, robot.n_envs, robot=robot)
        hook = None if on_tick is None else (lambda k, controller, q: on_tick(k, motion, scene))
        controller, _ = simulate(run, scene, robot, motion, on_tick=hook, show_progress=False)
        return final_state(run, robot, controller, motion, scene.t, scene=scene), motion
    finally:
        scene.close()


def test_the_cube_goes_from_the_left_hand_to_the_right_one_and_onto_its_place():
    result, motion = run_handover({})
    ep = result.episodes[0]
    assert ep["success"] and ep["expert_reason"] == "" and ep["place_error_xy_m"] < 0.01, ep
    order = ["pre_grasp", "descend", "close", "lift", "to_meet", "take", "take_close", "give_open", "give_retreat",
             "carry", "place", "open", "retreat", "done"]
    times = [ep["phase_started_s"][name] for name in order]
    assert times == sorted(times)
    assert np.allclose(ep["object_final_pos"][:2], [0.0, -0.24], atol=0.01)


def test_with_sphere_rows_the_cube_moves_with_each_holding_hand_and_is_handed_over_too():
    """controller.collision_model: spheres: the cube's rows come from its spheres, given in the giver's carrying
    link on the way to the meeting point and in the taker's while it carries (its fingers then unwatched)."""
    carriers = set()

    def watch(k, motion, scene):
        if k % 8:
            return
        robot = scene.robots[0]
        model = robot.sphere_model(None, (), ("cube",))
        n = len(motion.holder)  # the contacts the motion means now, as the loop hands them to the controller
        meant = GraspState(tuple(frozenset(["cube"]) if r else frozenset() for r in motion.released), (frozenset(),) * n,
                           tuple({"cube": motion.arms[h]} if h >= 0 else {} for h in motion.holder))
        objects, skipped = robot.sphere_state(model, robot.read_states()[0], meant)
        if objects.link[0, 0] >= 0:
            carriers.add(robot.model.link_names[objects.link[0, 0]])
            assert any(a.endswith("gripper_left") and b == "cube" for a, b in skipped[0])
    result, _ = run_handover({"controller.collision_model": "spheres"}, watch)
    ep = result.episodes[0]
    assert ep["success"] and ep["place_error_xy_m"] < 0.01, ep
    assert carriers == {"left/link_6", "right/link_6"}


def test_the_grips_share_no_face_and_each_hand_points_where_it_goes():
    u = np.array([[0.0, 1.0, 0.0]])
    C = level_closing(np.array([[np.cos(0.2), 0.0, 0.0, np.sin(0.2)]]), u)  # a cube turned 0.4 rad about z
    assert np.allclose(C, [[-np.cos(0.4), -np.sin(0.4), 0.0]])  # its face normal nearest z x u = -x
    poses = HandoverPoses(u, np.array([[-1.0, 0.0, 0.0]]), np.full(3, 0.03), 0.02, 0.02, np.array([0, 0, 0.25]),
                          ("x", "y"), np.ones(1))
    envs = np.array([0])
    _, R_meet = poses.meet_pose(envs)
    _, R_take = poses.take(poses.meet, envs)
    giver_closing, taker_closing = R_meet[0] @ axis_vector("y"), R_take[0] @ axis_vector("y")
    assert abs(giver_closing @ taker_closing) < 1e-12  # two different pairs of faces
    assert np.allclose(R_meet[0] @ axis_vector("x"), -u[0]) and np.allclose(R_take[0] @ axis_vector("x"), u[0])
    assert np.allclose(giver_closing, [-1.0, 0.0, 0.0])  # the grasp's closing direction, turned level with it
    flipped = poses._replace(C=-poses.C)
    assert np.allclose(flipped.meet_pose(envs)[1][0] @ axis_vector("y"), [1.0, 0.0, 0.0])
    R = frame(np.array([[0.0, 0.0, -1.0]]), np.array([[1.0, 0.0, 0.0]]), ("x", "y"))
    assert np.allclose(R[0].T @ R[0], np.eye(3)) and np.isclose(np.linalg.det(R[0]), 1.0)


@pytest.mark.parametrize("sets, reason", [
    ({"task.meet": [0.0, 0.0, 0.9]}, "unreachable"),
    ({"scene_overrides.objects": [{"name": "cube", "size": [0.1, 0.1, 0.1], "pos": [0.0, 0.25, 0.05]}]},
     "ungraspable"),
])
def test_what_cannot_be_done_fails_before_the_arms_move(sets, reason):
    result, motion = run_handover({**sets, "duration": 0.3})
    assert result.episodes[0]["expert_reason"] == reason and result.episodes[0]["phase"] == "failed"


def test_a_taker_too_weak_to_hold_the_cube_drops_it_when_the_giver_lets_go():
    result, _ = run_handover({"scene_overrides.robots": _robots(right_force=0.2)})
    ep = result.episodes[0]
    assert not ep["success"] and ep["expert_reason"] in ("dropped", "slipped", "grasp_missed") and ep["failed_arm"] == "right"


def test_a_cube_taken_away_before_the_giver_closes_is_a_missed_grasp():
    def take_away(k, motion, scene):
        if motion.step[0] == 2:  # close
            scene.objects["cube"].set_pose([0.15, 0.2, 0.03])
    result, _ = run_handover({"duration": 6.0}, take_away)
    ep = result.episodes[0]
    assert ep["expert_reason"] == "grasp_missed" and ep["failed_arm"] == "left", ep


def test_a_run_too_short_reports_timeout_with_the_step_it_reached():
    result, _ = run_handover({"duration": 4.0})
    ep = result.episodes[0]
    assert not ep["success"] and ep["expert_reason"] == "timeout" and ep["phase"] in ("lift", "to_meet", "close"), ep


def _robots(right_force: float) -> list[dict]:
    import yaml

    robots = yaml.safe_load((ROOT / "scenes" / "handover.yaml").read_text())["robots"]
    robots[1]["gripper"]["force"] = right_force
    return robots


def test_a_wall_between_the_arms_is_a_collision_of_the_giver_for_the_ik_controller():
    wall = [{"name": "wall", "size": [0.4, 0.02, 0.3], "pos": [0.0, 0.1, 0.15]}]
    result, _ = run_handover({"scene_overrides.obstacles": wall, "duration": 8.0})
    ep = result.episodes[0]
    assert ep["expert_reason"] == "collision" and ep["failed_arm"] == "left", ep


def test_the_video_films_from_a_named_fixed_camera_in_the_followed_environment():
    from app.episode.video_job import video_view
    from app.errors import ConfigError

    run = load_run_config(CONFIG, {"video.camera": "cam_high", "video.follow_env": 1}, n_envs=2)
    origins = np.array([[0.0, 0.0, 0.0], [1.6, 0.0, 0.0]])
    view = video_view(run, None, None, origins)
    cam = run.scene_config.cameras[0]
    assert np.allclose(view.eye, origins[1] + cam.eye) and np.allclose(view.target, origins[1] + cam.target)
    with pytest.raises(ConfigError, match="video.camera: 'cam_low' is not a named camera of the scene"):
        load_run_config(CONFIG, {"video.camera": "cam_low"})


KIT = ROOT.parent / "shared" / "reference" / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"


@pytest.mark.skipif(not KIT.is_file(), reason="../shared/reference (Trossen's Stationary AI) is absent")
def test_the_kits_own_description_hands_the_cube_over_too():
    """scenes/stationary_ai_handover.yaml: the official one-file URDF (two follower arms, their mesh fingers, the
    kit's table top), each arm's gripper named in robot.grippers."""
    result, _ = run_handover({"scene": "scenes/stationary_ai_handover.yaml", "task.meet": [0.0, 0.0, 0.27],
                              "scene_overrides.objects": [{"name": "cube", "size": [0.06, 0.06, 0.06], "mass": 0.05,
                                                           "pos": [0.02, 0.25, 0.05]}]})
    ep = result.episodes[0]
    assert ep["success"] and ep["place_error_xy_m"] < 0.01, ep


def test_a_gripper_of_a_several_arm_description_must_name_one_of_its_arms():
    from app.errors import ConfigError

    if not KIT.is_file():
        pytest.skip("../shared/reference (Trossen's Stationary AI) is absent")
    grippers = [{"arm": "middle", "joints": ["follower_left_left_carriage_joint"]}]
    with pytest.raises(ConfigError, match=r"robot.grippers\[0\].arm: must name one of the arms \['left', 'right'\]"):
        load_run_config(ROOT / "configs" / "bimanual_ik.yaml", {"scene": "scenes/stationary_ai_handover.yaml",
                                                                "scene_overrides.robot.grippers": grippers})


@pytest.mark.parametrize("sets, message", [
    ({"task.min_separation": -0.1}, "task.min_separation: must be >= 0 m, got -0.1"),
    ({"task.place_range": [[0.1, -0.2], [0.0, -0.3]]}, "task.place_range: needs [[x_lo, y_lo], [x_hi, y_hi]]"),
    ({"task.close_time": 0.0}, "task.close_time: must be > 0, got 0.0"),
])
def test_bad_handover_place_and_timing_values_are_config_errors_naming_the_key(sets, message):
    from app.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        load_run_config(CONFIG, sets)
    assert message in str(exc.value)
