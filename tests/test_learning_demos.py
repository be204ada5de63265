"""app.learning's demonstrations and their dataset: everything a policy is judged on is observable, frame t holds
the observation measured at t beside the action of the step from t, the actions mean what the environment does
with them, the statistics are lerobot's, and evaluation seeds give starts the demonstrations did not hold. No
torch or lerobot needed."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from app.config.loader import load_run_config
from app.dataset import load_dataset
from app.envs import make_vec_env
from app.episode.episode_scene import EpisodeScene
from app.learning.curve import EVAL_SEED_OFFSET
from app.learning.demo_dataset import DemoWriter, demo_spec
from app.learning.demos import expert_joint_actions, play_demos
from app.recording.episode_scenes import read_scenes
from tests.conftest import ROOT

PICK = ROOT / "configs" / "pick_place.yaml"
SEEDS = [11, 12, 13]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Three demonstrations of pick_place written as app.learn writes them, with what made them."""
    run = load_run_config(PICK)
    actions = expert_joint_actions(run, SEEDS, len(SEEDS))
    out = tmp_path_factory.mktemp("demos") / "dataset"
    writer = DemoWriter(out, run, demo_spec(run, run.video.fps, "state", []))
    demos = play_demos(run, SEEDS, actions, len(SEEDS), on_demo=lambda d: writer.append(d) if d.success else None)
    return run, actions, demos, out


def test_the_scripted_expert_demonstrates_every_seed_through_the_joint_actions_a_policy_uses(recorded):
    _, actions, demos, out = recorded
    assert [d.success for d in demos] == [True] * len(SEEDS), [d.reason for d in demos]
    assert len(load_dataset(out).episodes) == len(SEEDS)
    for demo, held in zip(demos, actions):
        assert len(demo.state) == len(demo.action) <= len(held) + 1


def test_the_place_target_is_a_feature_of_the_dataset_and_equals_each_episodes_drawn_target(recorded):
    run, _, demos, out = recorded
    data = load_dataset(out)
    assert data.environment_names[-2:] == ("place_target.x", "place_target.y")
    scenes = read_scenes(out, run)
    for k, (episode, demo) in enumerate(zip(data.episodes, demos)):
        np.testing.assert_allclose(episode.environment_state[:, -2:], np.tile(demo.scene.place, (len(episode.state), 1)),
                                   atol=1e-6)
        np.testing.assert_allclose(scenes[k].place, demo.scene.place)


def test_replaying_a_datasets_actions_from_its_seeds_gives_its_observations_frame_by_frame(recorded):
    """Frame t holds the observation measured at t and the action commanded for the step from t: the actions
    fed back from each episode's start (same seeds, same world size) reproduce every observation to 1e-6."""
    run, _, _, out = recorded
    data = load_dataset(out)
    actions = [e.action for e in data.episodes]
    env = make_vec_env(run, len(SEEDS), obs_type="state", action_mode="joint")
    try:
        obs, _ = env.reset(seed=SEEDS)
        ended = np.zeros(len(SEEDS), bool)
        for t in range(max(len(a) for a in actions)):
            for e, episode in enumerate(data.episodes):
                if t < len(episode.state):
                    np.testing.assert_allclose(obs["agent_pos"][e], episode.state[t], atol=1e-6, err_msg=f"{e} {t}")
                    np.testing.assert_allclose(obs["environment_state"][e], episode.environment_state[t], atol=1e-6)
            step = np.stack([a[min(t, len(a) - 1)] for a in actions])
            obs, _, terminated, truncated, info = env.step(step)
            for e in np.flatnonzero((terminated | truncated) & ~ended):
                assert t + 1 == len(data.episodes[e].state) and terminated[e], "an episode ends at its last frame"
            ended |= terminated | truncated
        assert ended.all()
    finally:
        env.close()


def test_the_action_is_the_joint_goal_in_the_states_layout_at_the_environments_step_rate(recorded):
    """Same names and order as the state, the rate the environment steps at, and each arm joint's action is
    where that joint stood one step later in the expert's own run (absolute targets in radians)."""
    run, actions, demos, out = recorded
    info = json.loads((out / "meta" / "info.json").read_text())
    env = make_vec_env(run, 1, obs_type="state", action_mode="joint")
    try:
        assert info["fps"] == env.metadata["render_fps"] == run.video.fps
        names = info["features"]["action"]["names"]
        assert names == info["features"]["observation.state"]["names"] == list(env.core.world.layout.names)
    finally:
        env.close()
    demo = demos[0]
    arm = [k for k, n in enumerate(names) if not n.endswith("6")]
    np.testing.assert_allclose(demo.action[:-1, arm], actions[0][:len(demo.action) - 1][:, arm])
    moved = np.abs(np.diff(demo.state[:, arm], axis=0)).max()
    assert np.abs(demo.state[1:, arm] - demo.action[:-1, arm]).max() < moved, "actions lead the state by a step"


def test_stats_json_is_what_lerobot_computes_from_the_frames(recorded):
    """Per feature: min, max, mean, population std over every frame of every episode, and the count."""
    _, _, _, out = recorded
    stats = json.loads((out / "meta" / "stats.json").read_text())
    table = pq.read_table(sorted((out / "data").rglob("*.parquet"))[0])
    for key in ("observation.state", "action", "observation.environment_state"):
        values = np.array(table.column(key).to_pylist(), dtype=np.float64)
        np.testing.assert_allclose(stats[key]["mean"], values.mean(axis=0), atol=1e-6, err_msg=key)
        np.testing.assert_allclose(stats[key]["std"], values.std(axis=0), atol=1e-6, err_msg=key)
        np.testing.assert_allclose(stats[key]["min"], values.min(axis=0), atol=1e-6)
        np.testing.assert_allclose(stats[key]["max"], values.max(axis=0), atol=1e-6)
        assert stats[key]["count"] == [len(values)]
    episode, frame = (np.array(table.column(k).to_pylist()) for k in ("episode_index", "frame_index"))
    assert sorted(set(episode)) == list(range(len(SEEDS)))
    for k in range(len(SEEDS)):
        assert list(frame[episode == k]) == list(range(int((episode == k).sum())))


def test_evaluation_seeds_start_episodes_the_demonstrations_never_held():
    run = load_run_config(PICK)
    env = make_vec_env(run, 1, obs_type="state", action_mode="joint")
    try:
        def start(seed: int) -> EpisodeScene:
            env.reset(seed=seed)
            return env.core.scenes[0]

        demo_starts = {tuple(np.round(start(s).objects["cube"][0], 6)) for s in range(20)}
        held_out = [start(EVAL_SEED_OFFSET + s) for s in range(20)]
        assert not demo_starts & {tuple(np.round(s.objects["cube"][0], 6)) for s in held_out}
    finally:
        env.close()


def test_ee_pose_demonstrations_are_the_experts_own_episodes_and_replay_exactly(tmp_path):
    """In the ee_pose mode a frame's action is the expert's end-effector pose and finger for the step from it
    (8 values an arm, named main_ee.x .. main_gripper); fed back from the same seeds they give every observation
    again to 1e-6."""
    run = load_run_config(PICK)
    out = tmp_path / "dataset"
    writer = DemoWriter(out, run, demo_spec(run, run.video.fps, "state", [], "ee_pose"))
    demos = play_demos(run, SEEDS[:2], None, 2, on_demo=writer.append)
    assert all(d.success for d in demos)
    data = load_dataset(out)
    assert data.action_names == ("main_ee.x", "main_ee.y", "main_ee.z", "main_ee.qw", "main_ee.qx", "main_ee.qy",
                                 "main_ee.qz", "main_gripper")
    env = make_vec_env(run, 2, obs_type="state", action_mode="ee_pose")
    try:
        obs, _ = env.reset(seed=SEEDS[:2])
        for t in range(max(len(e.state) for e in data.episodes)):
            for e, episode in enumerate(data.episodes):
                if t < len(episode.state):
                    np.testing.assert_allclose(obs["agent_pos"][e], episode.state[t], atol=1e-6)
                    np.testing.assert_allclose(obs["environment_state"][e], episode.environment_state[t], atol=1e-6)
            obs, *_ = env.step(np.stack([e.action[min(t, len(e.action) - 1)] for e in data.episodes]))
    finally:
        env.close()
