"""Demonstrations for a policy to learn from, recorded through the very environment the policy will act in, so
that what it learns is what it meets (app.envs' vector environment, ``joint`` action mode).

In the ``ee_pose`` action mode the expert's own episodes are the demonstrations: each frame the observation and the
expert's action (end-effector pose and finger position per arm). In the ``joint`` mode, two passes over the same
seeds:

1. the scripted expert (app.evaluation.expert) acts in the ``ee_pose`` mode; after each step the arm joints it
   reached and each gripper's commanded finger position are kept: the episode's joint actions;
2. those joint actions are played in the ``joint`` mode, where every row is written as it happens: the
   observation measured at step t (``observation.state`` = ``agent_pos``, ``observation.environment_state``, the
   cameras' pictures) beside the action commanded for the step from t, as ``lerobot-eval`` feeds them back.

An episode is kept where pass 2 succeeded, judged by the environment's own judge (app.tasks.judge), the one an
evaluation uses. Its frames end at the step that succeeded. Playing a kept episode's actions again from its seed
gives its observations again (tests/test_learning_demos.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.dataset.joint_names import GRIPPER_SLOT, JOINTS_PER_ARM
from app.envs import make_vec_env
from app.evaluation.expert import ExpertPolicy
from app.evaluation.runner import evaluate


class Demo(NamedTuple):
    """One episode played in the ``joint`` mode: its seed (the environment's reset seed), its scene (the draw that
    seed gave: app.episode.episode_scene.EpisodeScene), success and the judge's reason, and per frame
    (n_frames = its steps): ``state`` (n, n_values) the observation's agent_pos, ``action`` (n, n_values) the
    joint action of the step from that frame, ``environment_state`` (n, k) or None, ``images`` camera -> (n, h, w,
    3) uint8 ({} without cameras)."""

    seed: int
    scene: object
    success: bool
    reason: str
    state: np.ndarray
    action: np.ndarray
    environment_state: np.ndarray | None
    images: dict


class _Rows:
    """Per wave the rows every environment slot saw, step by step."""

    def __init__(self) -> None:
        self.rows: list = []

    def reset(self) -> None:
        self.rows = []


def expert_joint_actions(run, seeds: list[int], num_envs: int) -> list[np.ndarray]:
    """Pass 1: per seed the expert's joint actions (n_steps, n_values): the layout's values measured after each
    step (the joints where the expert's controller took them) with each gripper's slot the finger position the
    expert commanded for that step."""
    env = make_vec_env(run, min(num_envs, len(seeds)), obs_type="state", action_mode="ee_pose")
    core = env.core
    expert, after, fingers = ExpertPolicy(env), _Rows(), _Rows()
    k = len(core.world.layout.arms)

    class Watched:
        name = "expert"

        def reset(self) -> None:
            expert.reset()
            after.reset()
            fingers.reset()

        def select_action(self, observation: dict) -> np.ndarray:
            a = expert.select_action(observation)
            fingers.rows.append(a.reshape(len(a), k, -1)[:, :, -1].copy())
            return a

    out: dict[int, np.ndarray] = {}
    slots: list = []

    def on_step(_: int, __: dict) -> None:
        after.rows.append(core.world.layout.agent_pos(core.world.robot.read_states()[0]))

    def on_episode(record) -> None:
        e = slots.index(record.episode_ix)
        action = np.stack([r[e] for r in after.rows[:record.steps]])
        finger = np.stack([r[e] for r in fingers.rows[:record.steps]])
        for a in range(k):
            action[:, a * JOINTS_PER_ARM + GRIPPER_SLOT] = finger[:, a]
        out[record.episode_ix] = action

    try:
        evaluate(env, Watched(), len(seeds), seed=0, scenes=None, on_episode=on_episode, on_step=on_step,
                 on_wave=lambda s: slots.__setitem__(slice(None), s), seeds=seeds)
    finally:
        env.close()
    return [out[i] for i in range(len(seeds))]


def play_demos(run, seeds: list[int], actions: list[np.ndarray] | None, num_envs: int, obs_type: str = "state",
               image_size: tuple[int, int] | None = None, on_demo=None) -> list[Demo]:
    """The demonstrations as written: with ``actions`` (pass 2), each seed's joint actions (n_steps, n_values;
    rounded to float32, as a dataset keeps them, so that the dataset's actions replay its observations exactly)
    played in the ``joint`` mode, held at their last row past their end; without (``None``), the expert itself
    acting in the ``ee_pose`` mode (its float32 actions are the dataset's). Observations of ``obs_type``
    (app.envs.options; cameras at ``image_size``). Every episode as a Demo, in seed order; ``on_demo(demo)`` as
    each is ready, in seed order (the caller writes and forgets it: a wave's pictures are the most held at once)."""
    mode = "ee_pose" if actions is None else "joint"
    actions = None if actions is None else [np.asarray(a, dtype=np.float32) for a in actions]
    options = {"obs_type": obs_type, "action_mode": mode} | ({"image_size": image_size} if image_size else {})
    env = make_vec_env(run, min(num_envs, len(seeds)), **options)
    seen, slots, demos, given, acted = _Rows(), [], {}, [], _Rows()
    expert = ExpertPolicy(env) if actions is None else None

    class Player:
        name = "expert" if actions is None else "expert_joint_actions"

        def reset(self) -> None:
            seen.reset()
            acted.reset()
            if expert is not None:
                expert.reset()

        def select_action(self, observation: dict) -> np.ndarray:
            seen.rows.append(_copy(observation))
            t = len(seen.rows) - 1
            a = expert.select_action(observation) if expert is not None else \
                np.stack([actions[i][min(t, len(actions[i]) - 1)] for i in slots])
            acted.rows.append(np.asarray(a, dtype=np.float32))
            return acted.rows[-1]

    def on_episode(record) -> None:
        e, n = slots.index(record.episode_ix), record.steps
        rows = seen.rows[:n]
        env_state = np.stack([r["environment_state"][e] for r in rows]) if "environment_state" in rows[0] else None
        images = {c: np.stack([r["pixels"][c][e] for r in rows]) for c in rows[0].get("pixels", {})}
        action = np.stack([r[e] for r in acted.rows[:n]]).astype(float)
        demo = Demo(seeds[record.episode_ix], env.core.scenes[e], record.success, record.reason,
                    np.stack([r["agent_pos"][e] for r in rows]).astype(float), action, env_state, images)
        demos[record.episode_ix] = demo
        while on_demo is not None and len(given) in demos:  # in seed order: a wave's episodes end in any order
            on_demo(demos[len(given)])
            demos[len(given)] = demos[len(given)]._replace(images={})
            given.append(len(given))

    try:
        evaluate(env, Player(), len(seeds), seed=0, on_episode=on_episode,
                 on_wave=lambda s: slots.__setitem__(slice(None), s), seeds=seeds)
    finally:
        env.close()
    return [demos[i] for i in range(len(seeds))]


def _copy(observation: dict) -> dict:
    return {k: ({c: np.array(v) for c, v in o.items()} if isinstance(o, dict) else np.array(o))
            for k, o in observation.items()}
