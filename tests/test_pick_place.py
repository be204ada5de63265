"""Pick-and-place in PyBullet through the project's controllers: success per environment, and every failure
reason provoked by what causes it (a cube out of reach, a too-wide cube, a weak grip, a knocked-off cube, a
cube taken away before the fingers close, a shelf in the way, too little time)."""

import numpy as np
import pybullet as pb
import pytest

from app.config.loader import load_run_config
from app.control.phases import Phase
from app.episode.loop import final_state, simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.ik.limits.distance import CollisionPairs, GraspState
from tests.conftest import ROOT

CONFIG = ROOT / "configs" / "pick_place.yaml"
ONE_CUBE = {"n_envs": 1, "scene_overrides.objects": [{"name": "cube", "pos": [0.33, -0.1, 0.025]}],
            "task.place_range": None, "task.place_pos": [0.33, 0.1], "duration": 7.0}


def run_pick(sets: dict, on_tick=None):
    """(episodes, scene state at the end) of the pick config with ``sets``; ``on_tick(k, motion, scene)``."""
    run = load_run_config(CONFIG, sets={**ONE_CUBE, **sets})
    scene, robot = build_scene(run)
    try:
        motion = run_motion(run, robot.n_envs, robot=robot)
        hook = None if on_tick is None else (lambda k, controller, q: on_tick(k, motion, scene))
        controller, _ = simulate(run, scene, robot, motion, on_tick=hook, show_progress=False)
        result = final_state(run, robot, controller, motion, scene.t, scene=scene)
        q_start = robot.initial_qpos
        return result, motion, q_start
    finally:
        scene.close()


@pytest.mark.parametrize("controller", ["ik", "qp", "qp_spheres"])
def test_pick_place_places_the_cube_with_either_controller(controller):
    """qp_spheres: the QP's rows from the link spheres, the cube's too (held: moving with the gripper); the
    spheres' margin slows the fingers' descent to the table, so the episode gets the config's 8 s."""
    spheres = {"controller.collision_model": "spheres", "duration": 8.0} if controller == "qp_spheres" else {}
    result, motion, _ = run_pick({"controller.type": controller.split("_")[0], **spheres})
    ep = result.episodes[0]
    assert ep["success"], ep
    assert ep["expert_reason"] == "" and ep["phase"] == "done"
    assert ep["place_error_xy_m"] <= 0.01
    final = result.objects["cube"]["final_pos"][0]
    assert np.linalg.norm(final[:2] - [0.33, 0.1]) <= 0.01 and abs(final[2] - 0.025) < 2e-3  # resting on the table
    assert list(ep["phase_started_s"]) == ["pre_grasp", "descend", "close", "lift", "carry", "place", "open",
                                           "retreat", "done"]


def test_out_of_reach_cube_is_unreachable_before_the_arm_moves():
    result, motion, q_start = run_pick({"scene_overrides.objects": [{"name": "cube", "pos": [0.64, 0.3, 0.025]}]})
    ep = result.episodes[0]
    assert not ep["success"] and ep["expert_reason"] == "unreachable" and ep["failed_at_s"] == 0.0
    assert ep["grasp"]["reachable_candidates"] == 0
    arm = slice(0, 6)
    assert np.abs(result.q_final[0, arm] - q_start[0, arm]).max() < 2e-3  # the arm held still


def test_cube_wider_than_the_open_fingers_is_ungraspable():
    result, _, _ = run_pick({"scene_overrides.objects": [{"name": "cube", "size": [0.1, 0.1, 0.05],
                                                         "pos": [0.33, -0.1, 0.025]}]})
    ep = result.episodes[0]
    assert ep["expert_reason"] == "ungraspable" and ep["failed_at_s"] == 0.0


def test_weak_grip_lets_the_cube_slip():
    result, _, _ = run_pick({"scene_overrides.robot.gripper.force": 0.1})
    ep = result.episodes[0]
    assert not ep["success"] and ep["expert_reason"] == "slipped" and ep["phase_reached"] in ("lift", "carry"), ep


def test_cube_knocked_along_the_fingers_slips():
    """A shove of 200 N for one step in the carry: the cube slides along the pads (still between them) first."""
    def knock(k, motion, scene):
        if motion.log.phase[0] == Phase.CARRY and "knocked" not in motion.log.started[0]:
            motion.log.started[0]["knocked"] = 0.0
            body = scene.objects["cube"].body_ids[0]
            pb.applyExternalForce(body, -1, [0.0, 0.0, -200.0], [0, 0, 0], pb.WORLD_FRAME, physicsClientId=scene.client)
    result, _, _ = run_pick({}, knock)
    ep = result.episodes[0]
    assert ep["expert_reason"] == "slipped" and ep["phase_reached"] == "carry", ep


def test_cube_let_go_in_the_carry_is_dropped():
    """The fingers opened mid-carry (the test overrides the motion's command): contact is lost, then it falls."""
    def release(k, motion, scene):
        if motion.log.phase[0] == Phase.CARRY:
            motion.closing[0] = 0.0
    result, _, _ = run_pick({}, release)
    ep = result.episodes[0]
    assert ep["expert_reason"] == "dropped" and ep["phase_reached"] == "carry", ep
    assert result.objects["cube"]["final_pos"][0][2] < 0.03  # back on the table


def test_cube_taken_away_before_the_fingers_close_is_a_missed_grasp():
    def take(k, motion, scene):
        if motion.log.phase[0] == Phase.CLOSE and "moved" not in motion.log.started[0]:
            scene.objects["cube"].set_pose([0.2, -0.25, 0.025])
            motion.log.started[0]["moved"] = 0.0
    result, _, _ = run_pick({}, take)
    assert result.episodes[0]["expert_reason"] == "grasp_missed"


def test_shelf_above_the_cube_is_a_collision_for_the_ik_controller():
    shelf = {"name": "shelf", "size": [0.14, 0.14, 0.01], "pos": [0.33, -0.1, 0.085]}
    result, _, _ = run_pick({"scene_overrides.obstacles": [shelf]})
    assert result.episodes[0]["expert_reason"] == "collision"


def test_shelf_above_the_cube_rejects_every_grasp_as_collision_before_the_arm_moves_when_asked():
    """task.grasp_collision: the grasps' arm poses are checked against the table and the shelf by the spheres."""
    shelf = {"name": "shelf", "size": [0.14, 0.14, 0.01], "pos": [0.33, -0.1, 0.085]}
    result, _, q_start = run_pick({"scene_overrides.obstacles": [shelf], "task.grasp_collision": True,
                                   "duration": 0.3})
    ep = result.episodes[0]
    assert ep["expert_reason"] == "collision" and ep["failed_at_s"] == 0.0 and ep["grasp"]["reachable_candidates"] == 0, ep
    assert np.abs(result.q_final[0, :6] - q_start[0, :6]).max() < 2e-3  # the arm held still


def test_episode_cut_short_reports_timeout_with_its_phase():
    result, _, _ = run_pick({"duration": 1.0})
    codes = result.telemetry["episode_codes"]  # the phases each control tick, for the plot's panel
    assert codes.shape == result.telemetry["pos_err"].shape and (codes == 0).all()
    ep = result.episodes[0]
    assert ep["expert_reason"] == "timeout" and ep["phase"] == "pre_grasp"


def test_qp_pick_keeps_its_margin_from_the_table_while_the_held_cube_rows_are_dropped():
    """With qp the table and the cube are collision rows; the fingers may touch the cube from descend on, the
    other watched distances stay above d_safe - 0.1 mm (PyBullet's closest points)."""
    seen = {"rows_before": None, "rows_held": None}

    def rows(k, motion, scene):
        robot = scene.robots[0]
        q = robot.read_states()[0]
        pairs = CollisionPairs(("table", "cube"), (), 0.15, 10)
        meant = GraspState(tuple(frozenset(["cube"]) if r else frozenset() for r in motion.released), (frozenset(),),
                           ({},))  # the contacts the motion means now, as the loop hands them to the controller
        labels = list(robot.distance_rows(q, pairs, meant).labels)
        finger_cube = [l for l in labels if l.endswith("|cube") and l.split("|")[0] in ("gripper_left", "gripper_right")]
        if motion.log.phase[0] == Phase.DESCEND and seen["rows_before"] is None:  # with no contact meant
            seen["rows_before"] = [l for l in list(robot.distance_rows(q, pairs).labels)
                                   if l.endswith("|cube") and l.split("|")[0] in ("gripper_left", "gripper_right")]
        if motion.log.phase[0] == Phase.CARRY:
            seen["rows_held"] = finger_cube
    result, _, _ = run_pick({"controller.type": "qp"}, rows)
    assert result.episodes[0]["success"], result.episodes[0]
    assert seen["rows_before"] and seen["rows_held"] == []
    assert np.min(result.telemetry["min_distance"]) >= 0.01 - 1e-4  # the watched rows' closest distance
