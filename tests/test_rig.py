"""Several robots as one rig (scene ``robots:``): the composed description is the robots at their mount poses
(checked against Trossen's own Stationary AI URDF and PyBullet's FK), bad rigs are config errors, and a two-arm
run on the rig of two arms moves the joints exactly as the kit's one-file description does."""

import json

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.episode.loop import simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.errors import ConfigError, URDFError
from app.kinematics.compose import RobotPart, compose_urdf
from app.kinematics.model import KinematicModel
from tests.conftest import ROOT

REF = ROOT.parent / "shared" / "reference"
KIT = REF / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
needs_ref = pytest.mark.skipif(not KIT.is_file(), reason="../shared/reference (Trossen's Stationary AI) is absent")
S2 = float(np.sqrt(0.5))
MOUNTS = {"left": ((-0.019982, 0.4575, 0.039086), (S2, 0.0, 0.0, -S2)),
          "right": ((-0.019982, -0.4575, 0.039086), (S2, 0.0, 0.0, S2))}  # the kit's follower bases, from its URDF


def _follower_pair() -> list[RobotPart]:
    urdf = str(KIT.parent / "wxai_follower.urdf")
    return [RobotPart(name, urdf, *MOUNTS[name], (str(REF),)) for name in ("left", "right")]


@needs_ref
def test_two_official_arms_composed_at_the_kits_mounts_have_the_kits_forward_kinematics():
    kit = KinematicModel.from_urdf(str(KIT), [str(REF)])
    rig = KinematicModel.from_urdf_string(compose_urdf(_follower_pair()))
    assert rig.dof_names == tuple(n.replace("follower_", "").replace("_", "/", 1) for n in kit.dof_names)
    q = np.random.default_rng(0).uniform(kit.q_lower, kit.q_upper, (200, kit.n_dofs))
    (pk, qk), (pr, qr) = kit.forward_kinematics(q), rig.forward_kinematics(q)
    for side in ("left", "right"):
        for link in ("ee_gripper_link", "carriage_left", "link_3"):
            a, b = kit.link_index(f"follower_{side}_{link}"), rig.link_index(f"{side}/{link}")
            assert np.abs(pk[:, a] - pr[:, b]).max() < 1e-12
            assert np.abs(np.abs(np.sum(qk[:, a] * qr[:, b], axis=-1)) - 1.0).max() < 1e-12


def test_a_rig_in_pybullet_has_the_models_forward_kinematics_and_keeps_mimic_and_materials_apart():
    import pybullet as pb

    from app import Scene

    scene = Scene()
    parts = [RobotPart(n, str(ROOT / "assets/urdf/widowx_ai.urdf"), *MOUNTS[n]) for n in ("left", "right")]
    rig = scene.add_robots(parts)
    scene.build(n_envs=2)
    q = np.random.default_rng(1).uniform(rig.model.q_lower, rig.model.q_upper, (2, rig.n_dofs))
    rig.set_qpos(q)
    pos, _ = rig.forward_kinematics(rig.get_qpos())
    for e in range(2):
        for name in ("left/ee_gripper_link", "right/carriage_left"):
            state = pb.getLinkState(rig.bodies[e].body_id, rig.bodies[e].link_index[name], computeForwardKinematics=1,
                                    physicsClientId=scene.client)
            assert np.allclose(np.array(state[4]) - scene.env_origins[e], pos[e, rig.model.link_index(name)], atol=1e-6)
    assert rig.model.mimic == {"left/right_carriage_joint": ("left/left_carriage_joint", 1.0, 0.0),
                               "right/right_carriage_joint": ("right/left_carriage_joint", 1.0, 0.0)}
    text = compose_urdf(parts)
    assert text.count('<material name="left/dark">') == 1 and text.count('<material name="right/dark">') == 1
    scene.close()


@pytest.mark.parametrize("collide", [True, False])
def test_the_arms_of_a_rig_touch_each_other_physically_and_their_own_links_do_not(collide):
    """Both grippers sent to the same point, then 100 random configurations (an arm folded onto itself puts its
    link_1 into its link_6 in several): with collide_arms PyBullet reports contacts, every one between a link of
    the left arm and one of the right; without it (one body, no self-collision) none at all."""
    import pybullet as pb

    from app import Scene

    scene = Scene()
    rig = scene.add_robots([RobotPart(n, str(ROOT / "assets/urdf/widowx_ai.urdf"), *MOUNTS[n]) for n in MOUNTS])
    if collide:
        rig.collide_arms(["left/ee_gripper_link", "right/ee_gripper_link"])
    scene.build(n_envs=1)
    meet = np.array([[0.0, -0.02, 0.15], [0.0, 0.02, 0.15]])  # the fingers of the two grippers overlap there
    q = rig.inverse_kinematics_multilink(["left/ee_gripper_link", "right/ee_gripper_link"], meet,
                                         [(0.0, 1.0, 0.0, 0.0)] * 2, rot_mask=[False, False, True])
    rng = np.random.default_rng(0)
    body = rig.bodies[0]
    name = {i: n for n, i in body.link_index.items()}
    pairs = set()
    for k, qk in enumerate([np.asarray(q)] + list(rng.uniform(rig.model.q_lower, rig.model.q_upper, (100, 16)))):
        rig.set_qpos(np.reshape(qk, (1, -1)))
        pb.performCollisionDetection(physicsClientId=scene.client)
        pairs |= {(k == 0, name[c[3]].split("/")[0], name[c[4]].split("/")[0])
                  for c in pb.getContactPoints(body.body_id, body.body_id, physicsClientId=scene.client)}
    scene.close()
    assert all(a != b for _, a, b in pairs), pairs
    assert any(at_meet for at_meet, _, _ in pairs) == collide and bool(pairs) == collide


def test_collide_arms_after_the_scene_is_built_is_an_input_error_naming_the_order():
    from app import Scene
    from app.errors import InputError

    scene = Scene()
    rig = scene.add_robots([RobotPart(n, str(ROOT / "assets/urdf/widowx_ai.urdf"), *MOUNTS[n]) for n in MOUNTS])
    scene.build(n_envs=1)
    with pytest.raises(InputError, match="collide_arms must come before scene.build"):
        rig.collide_arms(["left/ee_gripper_link", "right/ee_gripper_link"])
    scene.close()


@pytest.mark.parametrize("names, message", [(["a", "a"], "used twice"), (["a/b"], "without '/'"), ([], "at least one")])
def test_rig_names_must_be_unique_and_plain(names, message):
    parts = [RobotPart(n, str(ROOT / "assets/urdf/widowx_ai.urdf")) for n in names]
    with pytest.raises(URDFError, match=message):
        compose_urdf(parts)


def _pair_sets(**robot_keys) -> dict:
    robots = [{"name": n, "urdf": str(ROOT / "assets/urdf/widowx_ai.urdf"), "base_pos": list(MOUNTS[n][0]),
               "base_quat": list(MOUNTS[n][1]), **robot_keys} for n in ("left", "right")]
    return {"scene_overrides.robots": robots}


@pytest.mark.parametrize("sets, message", [
    ({"scene": "scenes/table.yaml", **_pair_sets()}, "robot, robots: give one of them"),
    ({"task.motions": [{"arm": "middle"}]}, "task.motions[0].arm: unknown arm 'middle'; valid arms: ['left', 'right']"),
    ({"task.motions": [{"arm": "left", "type": "fingertips"}]}, "task.motions[0].type: 'fingertips'"),
    (_pair_sets(gripper={"force": 500.0}), "robots[0].gripper.force: must be in (0, "),
    (_pair_sets(arms={"a": "link_6"}), "robots[0].arms: a robot of a rig is one arm"),
    (_pair_sets(init_qpos=[0.0, 1.0]), "robots[0].init_qpos: 2 values for the 8 DOFs"),
])
def test_bad_rigs_and_arm_tasks_are_config_errors_naming_the_key(sets, message):
    with pytest.raises(ConfigError) as exc:
        load_run_config(ROOT / "configs/bimanual_ik.yaml", sets)
    assert message in str(exc.value)


def test_a_single_arm_task_addresses_an_arm_of_a_rig_by_name():
    run = load_run_config(ROOT / "configs/bimanual_ik.yaml", {"task": {"type": "static", "arm": "right",
                                                                        "center": [0.0, -0.15, 0.2]}})
    from app.episode.run_report import task_links

    assert task_links(run) == ["right/ee_gripper_link"]


def _joint_trajectory(scene_sets: dict, mode: str, n_envs: int = 3, duration: float = 1.0) -> np.ndarray:
    """Every physics step's measured joints (steps, n_envs, n_dofs) of bimanual_ik.yaml on the given scene."""
    run = load_run_config(ROOT / "configs/bimanual_ik.yaml", {"controller.mode": mode, **scene_sets},
                          n_envs=n_envs, duration=duration)
    scene, robot = build_scene(run)
    qs = []
    try:
        simulate(run, scene, robot, run_motion(run, robot.n_envs, robot=robot),
                 on_tick=lambda k, ctrl, q: qs.append(np.array(q)), show_progress=False)
    finally:
        scene.close()
    return np.array(qs)


@needs_ref
def test_two_arms_move_as_the_kits_own_description_does_with_the_motors():
    """The official follower arm pair (the kit's arms: the same links, masses and inertias) against the kit's URDF,
    both through PyBullet's motors: the same joint trajectories within 1e-4 rad."""
    rig = {"scene_overrides.robots": [
        {"name": p.name, "urdf": p.urdf, "base_pos": list(p.base_pos), "base_quat": list(p.base_quat),
         "package_dirs": list(p.package_dirs), "init_qpos": [0.0, 1.2, 1.0, -0.3, 0.0, 0.0, 0.02, 0.02]}
        for p in _follower_pair()]}
    a, b = _joint_trajectory(rig, "control"), _joint_trajectory({"scene": "scenes/stationary_ai.yaml"}, "control")
    assert a.shape == b.shape and a.shape[-1] == 16
    assert np.abs(a - b).max() < 1e-4, np.abs(a - b).max()


@needs_ref
def test_two_arms_solve_as_the_kits_own_description_does_kinematically():
    """The project's widowx_ai.urdf pair (the kit's arm kinematics) and the kit's URDF, on ideal joints (no
    physics): one multi-link IK solve per tick over 2 s gives the same joints within 1e-9 rad."""
    from app.control.controllers import PoseIKController, PoseIKControllerConfig
    from app.control.robot_protocol import IntegratorRobot
    from app.episode.motion_factory import make_motion
    from app.ik.robot_model import RobotModel

    run = load_run_config(ROOT / "configs/bimanual_ik.yaml", n_envs=3)
    kit = RobotModel.from_urdf(str(KIT), [str(REF)])
    pair = RobotModel.from_urdf_string(compose_urdf(
        [RobotPart(n, str(ROOT / "assets/urdf/widowx_ai.urdf"), *MOUNTS[n]) for n in ("left", "right")]))
    trajectories = []
    for model, links in ((pair, ["left/ee_gripper_link", "right/ee_gripper_link"]),
                         (kit, ["follower_left_ee_gripper_link", "follower_right_ee_gripper_link"])):
        robot = IntegratorRobot(model, n_envs=3, q0=np.array(run.scene_config.robot.init_qpos))
        ctrl = PoseIKController(robot, links, run.motion.pos_mask, run.motion.rot_mask,
                                PoseIKControllerConfig(dt=1 / 120, mode="kinematic"))
        motion, qs = make_motion(run, None, 3), []
        for k in range(240):
            ctrl.track(k / 120, motion(k / 120))
            robot.step()
            qs.append(robot.q.copy())
        assert ctrl.telemetry.arrays()["solver_ok"].all()
        trajectories.append(np.array(qs))
    assert np.abs(trajectories[0] - trajectories[1]).max() < 1e-9, np.abs(trajectories[0] - trajectories[1]).max()


def test_bimanual_ik_reaches_with_both_arms_and_reports_each_arm_by_name(tmp_path):
    from app.episode.execute import execute

    run = load_run_config(ROOT / "configs/bimanual_ik.yaml", n_envs=2, duration=3.0)
    result = execute(run, tmp_path, video=False, show_progress=False)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"]["reached"] == 2
    for env in report["environments"]:
        assert sorted(env["arms"]) == ["left", "right"]
        for k, arm in enumerate(("left", "right")):
            assert env["arms"][arm]["link"] == f"{arm}/ee_gripper_link"
            gap = np.linalg.norm(np.subtract(env["links_pos"][k], env["target_pos"][k]))
            assert env["arms"][arm]["pos_err_final_m"] == pytest.approx(gap, abs=1e-12) and gap < 1e-3
    assert result.q_final.shape == (2, 16)
    links = result.telemetry["pos_err_links"]  # per tick, environment and arm; the summary's error is the worst arm's
    assert links.shape == (len(result.telemetry["t"]), 2, 2)
    assert np.array_equal(links.max(axis=2), result.telemetry["pos_err"])
    assert all(env["arms"][a]["pos_err_max_after_1s_m"] >= env["arms"][a]["pos_err_final_m"]
               for env in report["environments"] for a in ("left", "right"))


def test_the_arms_of_a_rig_are_whole_subtrees_and_only_cross_arm_pairs_are_watched():
    from app.kinematics.arms import arm_link_groups, cross_arm_pairs

    model = KinematicModel.from_urdf_string(compose_urdf(
        [RobotPart(n, str(ROOT / "assets/urdf/widowx_ai.urdf"), *MOUNTS[n]) for n in ("left", "right")]))
    left, right = arm_link_groups(model, ["left/ee_gripper_link", "right/ee_gripper_link"])
    assert "left/base_link" in left and "left/gripper_left" in left and not any(n.startswith("right/") for n in left)
    assert set(left) | set(right) == set(model.link_names) - {"rig_root"}
    pairs = cross_arm_pairs(model, ["left/ee_gripper_link", "right/ee_gripper_link"])
    assert ("left/link_6", "right/link_6") in pairs and ("left/base_link", "right/base_link") not in pairs
    assert all(a.startswith("left/") and b.startswith("right/") for a, b in pairs)


def _pressing_report(tmp_path, collision_model: str = "spheres") -> dict:
    from app.episode.execute import execute

    run = load_run_config(ROOT / "configs/bimanual_qp.yaml", {"controller.collision_model": collision_model}, n_envs=2,
                          duration=5.0)
    execute(run, tmp_path, video=False, show_progress=False)
    return json.loads((tmp_path / "report.json").read_text())["invariants"]


def test_two_arms_pressing_towards_each_other_keep_their_margin_with_the_qp():
    """configs/bimanual_qp.yaml: each arm's target circles on the other arm's side; every pair of links of the two
    arms is watched by the link spheres (a lower bound of the true distance), and PyBullet's closest points, the
    referee, stay at least d_safe - 0.1 mm apart (60 s: scripts/soak_arms.py --collision-model spheres)."""
    from scripts.soak_arms import refereed

    inv = refereed(load_run_config(ROOT / "configs/bimanual_qp.yaml", n_envs=2, duration=5.0))
    assert inv["min_obstacle_distance_m"] < 0.02  # the arms did press together
    assert inv["min_obstacle_distance_m"] >= inv["obstacle_promise_m"], inv


@pytest.mark.parametrize("collision_model", ["spheres", "pybullet"])
def test_two_arms_pressing_towards_each_other_keep_joint_limits_velocities_and_watched_margin(tmp_path,
                                                                                               collision_model):
    """The report's own promises: with sphere rows the watched distance is the spheres' (each pair's closest and
    next-closest pair of spheres in the QP; with the closest alone the spheres came 0.24 mm inside d_safe)."""
    inv = _pressing_report(tmp_path, collision_model)
    assert inv["joint_limit_excess_max_rad"] <= 1e-6, inv
    assert inv["velocity_over_bound_max"] <= 1.02, inv
    assert inv["min_obstacle_distance_m"] >= inv["obstacle_promise_m"], inv


def test_each_arms_target_frame_is_labelled_with_its_arm_in_the_video_and_the_gui_line():
    """The video overlay writes each target's arm name beside its frame (and nothing for a one-arm run); the
    GUI's text line gives each arm's position error by name."""
    from app.control.telemetry import TelemetryLog
    from app.episode.gui import position_text
    from app.episode.run_report import target_labels
    from app.episode.video_job import legend
    from app.render.framing import CameraView
    from app.render.overlay import FrameOverlay, OverlayStyle, draw_overlay

    bimanual = load_run_config(ROOT / "configs/bimanual_ik.yaml", n_envs=1)
    assert target_labels(bimanual) == ("left", "right")
    assert target_labels(load_run_config(ROOT / "configs/batched_ik.yaml", n_envs=1)) == ()
    view = CameraView(np.array([0.0, -1.0, 0.6]), np.array([0.0, 0.0, 0.2]), 60.0, 320, 240)
    pos = np.array([[[-0.15, 0.0, 0.2], [0.15, 0.0, 0.2]]])  # one environment, two targets
    frame = FrameOverlay("t", 0.0, pos, np.tile(np.eye(3), (1, 2, 1, 1)), np.zeros(1, np.int8), np.zeros((1, 3)))
    grey = np.full((240, 320, 3), 90, np.uint8)
    plain = draw_overlay(grey, view, frame, OverlayStyle.for_view(view, legend()))
    named = draw_overlay(grey, view, frame, OverlayStyle.for_view(view, legend(), target_labels=("left", "right")))
    changed = np.any(named != plain, axis=2)
    for k in range(2):  # new white text below and left of each origin, and only there
        (x, y), _ = view.project(pos[0, k])
        below_left = changed[int(y):int(y) + 25, int(x) - 45:int(x)]
        assert (below_left & (named[int(y):int(y) + 25, int(x) - 45:int(x)].min(axis=2) > 200)).sum() >= 15
    assert changed.sum() == sum(changed[int(y):int(y) + 25, int(x) - 45:int(x)].sum()
                                for (x, y) in view.project(pos[0])[0])
    tel = TelemetryLog()
    tel.record(0.0, [0.002], [0.0], [True], [1.0], [0], [np.inf], [False], [[]], pos_err_links=[[0.002, 0.0005]])
    assert position_text(tel, 0, ("left", "right")) == "left 2.00 mm, right 0.50 mm"
    assert position_text(tel, 0, ()) == "2.00 mm"
