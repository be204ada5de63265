"""app.envs: Gymnasium's own checker on every registered id and action mode, seeds, the dataset layout of
agent_pos, limits kept under any joint action, stalls with their cause, success judged from the simulator,
autoreset, and bad actions as clear errors."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import app.envs as envs
from app.config.loader import load_run_config
from app.dataset.robot_map import robot_layout
from app.errors import InputError
from app.evaluation.expert import ExpertPolicy
from tests.conftest import ROOT

PICK = ROOT / "configs" / "pick_place.yaml"
HANDOVER = ROOT / "configs" / "handover.yaml"


@pytest.mark.parametrize("env_id", list(envs.ENV_IDS))
@pytest.mark.parametrize("mode", envs.ACTION_MODES)
def test_gymnasium_check_env_passes_for_every_registered_id_and_action_mode(env_id, mode):
    env = gym.make(env_id, action_mode=mode, image_size=(32, 48))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*symmetric and normalized space.*")  # physical units
            check_env(env.unwrapped, skip_render_check=True)
        assert env.observation_space["pixels"]["cam_high"].shape == (32, 48, 3)
    finally:
        env.close()


def test_the_same_seed_gives_the_same_first_frame_and_with_the_same_actions_the_same_episode():
    def episode(seed):
        env = envs.make_env(PICK, obs_type="pixels_state", image_size=(32, 32))
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(3)
        frames = [obs]
        for _ in range(20):
            frames.append(env.step(rng.uniform(env.action_space.low, env.action_space.high))[0])
        env.close()
        return frames

    a, b, c = episode(5), episode(5), episode(6)
    assert np.array_equal(a[0]["pixels"]["cam_high"], b[0]["pixels"]["cam_high"])
    assert all(np.array_equal(x["environment_state"], y["environment_state"]) for x, y in zip(a, b))
    assert not np.array_equal(a[0]["environment_state"], c[0]["environment_state"])  # another seed, another cube


def test_a_vector_env_slot_starts_the_episode_a_single_env_seeded_alike_starts():
    vec = envs.make_vec_env(PICK, 3, obs_type="state")
    one = envs.make_env(PICK, obs_type="state")
    try:
        obs_v, _ = vec.reset(seed=10)
        obs_1, _ = one.reset(seed=12)
        assert np.array_equal(obs_v["environment_state"][2], obs_1["environment_state"])
        assert not np.array_equal(obs_v["environment_state"][0], obs_1["environment_state"])
    finally:
        vec.close()
        one.close()


def test_agent_pos_is_the_layout_and_units_app_record_writes():
    env = envs.make_env(PICK, obs_type="state")
    try:
        obs, _ = env.reset(seed=0)
        core = env.unwrapped.core
        names, _ = robot_layout(list(core.world.robot.model.dof_names))
        assert list(core.world.layout.names) == names == [f"main_joint_{i}" for i in range(7)]
        q = core.world.robot.read_states()[0][0]
        fingers = core.world.layout.grippers[0].dofs
        np.testing.assert_allclose(obs["agent_pos"][6], np.mean(q[fingers]), atol=1e-6)  # the finger position [m]
    finally:
        env.close()


def test_joint_actions_beyond_the_limits_leave_the_arm_within_them():
    env = envs.make_vec_env(PICK, 2, obs_type="state", action_mode="joint")
    try:
        env.reset(seed=0)
        space = env.single_action_space
        worst = 0.0
        for k in range(60):
            far = np.where(k % 20 < 10, space.high + 1.0, space.low - 1.0)  # clipped to the space, then held
            _, _, _, _, info = env.step(np.tile(far, (2, 1)))
            worst = max(worst, float(np.max(info["limit_excess"])))
        assert worst <= 1e-6
    finally:
        env.close()


def test_random_extreme_joint_actions_that_slam_the_arm_into_the_table_leave_every_joint_within_its_limits():
    env = envs.make_vec_env(PICK, 4, obs_type="state", action_mode="joint")
    try:
        env.reset(seed=0)
        space, rng = env.single_action_space, np.random.default_rng(0)
        robot = env.unwrapped.core.world.robot
        lo, hi = robot.model.q_lower, robot.model.q_upper
        worst, hits = 0.0, 0
        for k in range(150):
            a = rng.uniform(space.low, space.high, size=(4, space.shape[0]))
            if k % 3 == 0:
                a = np.where(rng.random(a.shape) < 0.5, space.low, space.high)
            _, _, _, _, info = env.step(a)
            q = robot.read_states()[0]
            worst = max(worst, float(np.max(np.maximum(lo - q, q - hi))))
            hits += int(np.sum(info.get("stop_hits", 0)))
        assert worst <= 1e-6  # PyBullet's own limits let the table push a wrist 2e-2 rad and a finger 9 mm past
        assert hits > 0  # the contacts did push joints onto their stops, and the info says so
    finally:
        env.close()


def test_an_unreachable_end_effector_target_is_a_stall_with_its_cause():
    env = envs.make_env(PICK, obs_type="state", action_mode="ee_pose")
    try:
        env.reset(seed=0)
        target = np.array([1.2, 0.0, 0.4, 1.0, 0.0, 0.0, 0.0, 0.04], dtype=np.float32)  # 1.2 m out: beyond its reach
        causes = [env.step(target)[4]["stall_cause"] for _ in range(30)]
        assert "unreachable" in causes[-10:]
        info = env.step(target)[4]
        assert info["stalled"] and "unreachable" in info["stall"]["main"]
    finally:
        env.close()


def test_the_scripted_expert_succeeds_and_success_terminates_the_episode():
    env = envs.make_vec_env(PICK, 2, obs_type="state", action_mode="ee_pose")
    try:
        obs, _ = env.reset(seed=0)
        expert = ExpertPolicy(env)
        ended = {}
        for _ in range(env.core.max_steps):
            obs, reward, terminated, truncated, info = env.step(expert.select_action(obs))
            for e in np.flatnonzero(terminated | truncated):
                ended.setdefault(int(e), (bool(terminated[e]), bool(info["is_success"][e]), info["reason"][e],
                                          float(reward[e])))
            if len(ended) == 2:
                break
        assert ended == {0: (True, True, "", 4.0), 1: (True, True, "", 4.0)}
    finally:
        env.close()


def test_random_actions_fail_with_a_reason_at_the_time_limit():
    env = envs.make_env(PICK, obs_type="state", action_mode="joint", max_episode_steps=40)
    try:
        env.reset(seed=1)
        rng = np.random.default_rng(0)
        for _ in range(40):
            _, _, terminated, truncated, info = env.step(rng.uniform(env.action_space.low, env.action_space.high))
        assert truncated and not terminated and not info["is_success"]
        assert info["reason"] in ("collision", "not_touched", "grasp_missed", "not_lifted", "fell", "misplaced")
        assert info["episode_steps"] == 40
    finally:
        env.close()


def test_next_step_autoreset_starts_a_new_episode_after_one_ended():
    env = envs.make_vec_env(PICK, 2, obs_type="state", max_episode_steps=3)
    try:
        obs, _ = env.reset(seed=4)
        hold = obs["agent_pos"]
        for _ in range(3):
            obs, reward, terminated, truncated, _ = env.step(hold)
        assert truncated.all()
        first = obs["environment_state"].copy()
        obs, reward, terminated, truncated, info = env.step(hold)  # the reset step
        assert np.all(reward == 0) and not truncated.any() and env.core.steps.tolist() == [1, 1]
        assert not np.array_equal(first[:, :3], obs["environment_state"][:, :3])  # new cubes, drawn from the seeds
    finally:
        env.close()


def test_the_scene_option_starts_the_given_scene():
    env = envs.make_env(PICK, obs_type="state")
    try:
        _, info = env.reset(seed=0)
        scene = info["scene"]
        scene["objects"]["cube"]["pos"] = [0.3, 0.1, 0.025]
        obs, info = env.reset(options={"scene": scene})
        np.testing.assert_allclose(obs["environment_state"][:3], [0.3, 0.1, 0.025], atol=1e-6)
        with pytest.raises(InputError, match="objects"):
            env.reset(options={"scene": {"objects": {}}})
    finally:
        env.close()


@pytest.mark.parametrize("change, words", [
    ({"cube": {"pos": [0.3, 0.1, 0.0]}}, r"objects\.cube\.pos: .* 25\.0 mm into the table top"),
    ({"cube": {"pos": [0.3, 0.1, -0.3]}}, r"objects\.cube\.pos: .* into the table top"),
    ({"cube": {"pos": [50.0, 0.1, 0.025]}}, r"objects\.cube\.pos: .* 50 m from the environment's origin"),
    ({"cube": {"quat_wxyz": [0.0, 0.0, 0.0, 0.0]}}, r"objects\.cube\.quat_wxyz: must be a unit quaternion"),
    ({"cube": {"quat_wxyz": [2.0, 0.0, 0.0, 0.0]}}, r"norm 2"),
    ({"mug": {"pos": [0.3, 0.0, 0.025], "quat_wxyz": [1, 0, 0, 0]}}, r"objects \['mug'\] are not in the config"),
    ({"place_xy": [0.0, 40.0]}, r"place_xy \[0\.0, 40\.0\] is 40 m from"),
], ids=["inside the table", "under the table", "50 m away", "zero quaternion", "quaternion of norm 2",
        "an object the config lacks", "place target 40 m away"])
def test_a_scene_option_no_episode_could_start_from_is_refused_naming_the_key(change, words):
    env = envs.make_env(PICK, obs_type="state")
    try:
        _, info = env.reset(seed=0)
        scene = info["scene"]
        for key, value in change.items():
            if key == "place_xy":
                scene["place_xy"] = value
            else:
                scene["objects"].setdefault(key, {}).update(value)
        with pytest.raises(InputError, match=words):
            env.reset(options={"scene": scene})
        obs, _ = env.reset(seed=0)  # the environment is still usable
        assert np.all(np.isfinite(obs["environment_state"]))
    finally:
        env.close()


@pytest.mark.parametrize("action, words", [
    (np.full(7, np.nan), "action value 0 of environment 0 is nan"),
    (np.zeros(3), r"actions must have shape \(1, 7\)"),
    ("left", "numbers of shape"),
])
def test_a_bad_action_is_an_input_error_saying_what_is_wrong(action, words):
    env = envs.make_env(PICK, obs_type="state")
    try:
        env.reset(seed=0)
        with pytest.raises(InputError, match=words):
            env.step(action)
    finally:
        env.close()


def test_unknown_options_and_bad_values_are_errors_naming_them():
    with pytest.raises(InputError, match="unknown environment options"):
        envs.make_env(PICK, action_modes="joint")
    with pytest.raises(InputError, match="action_mode 'velocity' is not one of"):
        envs.make_env(PICK, action_mode="velocity")
    with pytest.raises(InputError, match="cameras \\['wrist'\\] are not cameras of the scene"):
        envs.make_env(PICK, cameras=["wrist"])


def test_the_handover_has_both_arms_in_the_stationary_layout():
    run = load_run_config(HANDOVER)
    env = envs.make_env(run, obs_type="state", action_mode="ee_pose")
    try:
        assert env.observation_space["agent_pos"].shape == (14,)
        assert env.action_space.shape == (16,)  # per arm: position, quaternion, finger
        assert env.unwrapped.core.world.layout.arms == ("left", "right")
    finally:
        env.close()


def test_a_two_arm_environment_judges_both_arms_joints_and_flags_a_jump_of_one():
    """The motion report of the Stationary AI's handover: its twelve arm joints (no fingers), no IK branches (two
    arms: none labelled), and a joint goal 1 rad off on the right arm's first joint flagged on that joint."""
    run = load_run_config(HANDOVER)
    env = envs.make_env(run, obs_type="state", action_mode="joint")
    try:
        obs, _ = env.reset(seed=0)
        hold = np.asarray(obs["agent_pos"], dtype=np.float32)
        for _ in range(3):
            env.step(hold)
        trace = env.unwrapped.core.motion
        report = trace.report(0)
        assert len(report["joints"]) == 12 and report["verdict"] == "smooth" and report["branch_changes"] == []
        jump = hold.copy()
        jump[7] += 1.0  # agent_pos: the left arm's 6 joints and finger, then the right arm's
        env.step(jump)
        first = trace.report(0)["first_event"]
        names = list(report["joints"])
        assert first["source"] == "commanded" and first["joint"] == names[6], first
    finally:
        env.close()


def test_environment_state_is_the_layout_app_record_writes_so_a_policy_trained_on_a_recording_reads_it():
    """A LeRobot policy trained on app.record's observation.environment_state (each object's pose) met an
    environment_state of 7 + 2 + 7 per arm values here; now both are the objects' poses then the place target,
    named alike, and the end-effector poses and place target are in ``info`` too."""
    from app.recording.blocks import environment_names

    env = envs.make_env(HANDOVER, obs_type="state")
    try:
        obs, _ = env.reset(seed=3)
        names = environment_names(load_run_config(HANDOVER))
        assert env.observation_space["environment_state"].shape == (len(names),) == obs["environment_state"].shape
        cube = env.unwrapped.core.world.scene.objects["cube"].poses()
        np.testing.assert_allclose(obs["environment_state"][:7], np.concatenate(cube, axis=1)[0], atol=1e-6)
        assert names[-2:] == ["place_target.x", "place_target.y"]
        place = env.unwrapped.core.scenes[0].place
        np.testing.assert_allclose(obs["environment_state"][7:], place, atol=1e-6)
        _, _, _, _, info = env.step(obs["agent_pos"])
        assert info["ee_pose"].shape == (2, 7) and info["place_target"].shape == (2,)
        np.testing.assert_allclose(info["place_target"], place)
    finally:
        env.close()


def test_a_robot_without_a_gripper_takes_joint_actions_that_move_its_fingers_as_joints():
    """A WidowX AI with no robot.gripper (configs/single_ik.yaml) crashed the env's spaces with an IndexError."""
    env = envs.make_env(ROOT / "configs/single_ik.yaml", obs_type="state", action_mode="joint", max_episode_steps=400)
    try:
        obs, _ = env.reset(seed=0)
        slot = 6  # the gripper's value in the Trossen layout: the finger DOFs' position [m]
        assert env.action_space.high[slot] == pytest.approx(0.044, abs=1e-3) and env.action_space.low[slot] == 0.0
        action = obs["agent_pos"].copy()
        action[slot] = 0.03
        for _ in range(400):
            obs, *_ = env.step(action)
        assert obs["agent_pos"][slot] == pytest.approx(0.03, abs=2e-3)
    finally:
        env.close()
    with pytest.raises(InputError, match=r"action_mode 'ee_pose' ends each arm's action with its gripper's finger "
                                         r"position, and the robot of single_ik \(scene scenes/table\.yaml\) has no "
                                         r"gripper"):
        envs.make_env(ROOT / "configs/single_ik.yaml", obs_type="state", action_mode="ee_pose")


def test_an_environment_refuses_to_be_copied_or_pickled_and_the_original_keeps_working():
    """copy.deepcopy shared the PyBullet world: stepping the copy moved the original and closing it broke it."""
    import copy
    import pickle

    from app.errors import InputError

    for env in (envs.make_env(PICK, obs_type="state"), envs.make_vec_env(PICK, 2, obs_type="state")):
        try:
            env.reset(seed=1)
            for clone in (copy.deepcopy, pickle.dumps):
                with pytest.raises(InputError, match="cannot be copied or pickled"):
                    clone(env)
            env.step(env.action_space.sample())
        finally:
            env.close()


@pytest.mark.parametrize("seed, words", [(1.5, "a whole number or a list"), ([1.5, 2], "entry 0 is 1.5"), (["a", 2], "entry 0 is 'a'"), ([True, 1], "entry 0"),
                                         ([1], "one seed per environment (2)"), ("7", "a whole number or a list")])
def test_a_vector_reset_with_seeds_that_are_not_whole_numbers_is_one_clear_error(seed, words):
    from app.errors import InputError

    env = envs.make_vec_env(PICK, 2, obs_type="state")
    try:
        with pytest.raises(InputError) as err:
            env.reset(seed=seed)
        assert words in str(err.value)
        with pytest.raises(InputError, match="reset_mask must be 2 booleans"):
            env.reset(seed=0, options={"reset_mask": [True]})
    finally:
        env.close()


def test_pixels_with_an_empty_camera_list_is_refused():
    from app.errors import InputError

    with pytest.raises(InputError, match="needs at least one camera"):
        envs.make_env(PICK, obs_type="pixels", cameras=[])
