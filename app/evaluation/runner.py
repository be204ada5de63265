"""Seeded episodes of a policy in a vector environment (app.envs.ManipulationVectorEnv), as ``lerobot-eval``
rolls out: waves of ``num_envs`` episodes, each wave reset together (episode i of the evaluation seeded
``seed + i``, or started in a given scene), stepped until every episode of the wave has ended (success or time
limit); an environment whose episode ended idles (its later steps are not counted). A seed's episode is the same
whichever wave slot or worker plays it where the environments do not touch (measured: docs/envs.md).

A policy is anything with ``select_action(observation) -> actions`` (num_envs, action_dim), batched over the
environments, and optionally ``reset()`` (called before each wave). A policy that raises, returns the wrong
shape or a value that is not finite stops the evaluation with a PolicyError naming the policy, the episode wave
and the step; the episodes finished before are kept (``EvalError.done``).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, NamedTuple

import numpy as np

from app.errors import AppError, InputError
from app.runtime.command import signal_behind


class EpisodeRecord(NamedTuple):
    """One evaluated episode: its index and seed, success, the judge's reason ('' on success), sum and max of
    the reward, steps, steps an arm stalled and their causes (cause -> steps), the largest joint-limit excess
    [rad or m], whether an arm collided, the place error at the end [m], the motion-quality verdict (the
    environment's ``motion_*`` info keys at the episode's end, app.envs.motion_watch; {} where it gave none)."""

    episode_ix: int
    seed: int | None
    success: bool
    reason: str
    sum_reward: float
    max_reward: float
    steps: int
    stall_steps: int
    stall_causes: dict
    limit_excess: float
    collided: bool
    place_error_m: float
    motion: dict


class PolicyError(AppError):
    """A policy failed during an evaluation. Attributes: policy (its name), step (of the wave), done (the
    EpisodeRecords finished before)."""

    def __init__(self, message: str, policy: str, step: int, done: list):
        super().__init__(message)
        self.policy, self.step, self.done = policy, step, done


def policy_name(policy) -> str:
    return getattr(policy, "name", type(policy).__name__)


def evaluate(env, policy, n_episodes: int, seed: int = 0, scenes: list | None = None,
             on_episode: Callable[[EpisodeRecord], None] | None = None,
             on_step: Callable[[int, dict], None] | None = None,
             on_wave: Callable[[list[int]], None] | None = None, first: int = 0,
             seeds: list[int] | None = None) -> list[EpisodeRecord]:
    """``n_episodes`` episodes of ``policy`` in ``env`` (indices ``first``.. ``first + n_episodes - 1``: a share
    of a bigger evaluation), in episode order, episode i seeded ``seed + i`` (or ``seeds[i]``); ``scenes`` (one
    per episode index) start them in given scenes instead of seeded draws; ``on_wave(slots)`` gets the episode
    index of each environment slot as a wave starts (a replay's, the videos'), ``on_episode`` each record as its
    episode ends, ``on_step(wave_step, infos)`` every step."""
    records: list[EpisodeRecord] = []
    n = env.num_envs
    hooks = (on_episode, on_step, on_wave)
    seed_of = (lambda i: seed + i) if seeds is None else (lambda i: int(seeds[i]))
    for start in range(first, first + n_episodes, n):
        ids = list(range(start, min(start + n, first + n_episodes)))
        records += _wave(env, policy, ids, seed_of, scenes, hooks, records)
    return records


def _wave(env, policy, ids: list[int], seed_of, scenes, hooks, done: list) -> list[EpisodeRecord]:
    on_episode, on_step, on_wave = hooks
    n = env.num_envs
    slots = ids + [ids[-1]] * (n - len(ids))  # a short last wave fills its idle slots with its last episode
    options = {} if scenes is None else {"scenes": [scenes[i] for i in slots]}
    obs, _ = env.reset(seed=[seed_of(i) for i in slots], options=options)
    if on_wave is not None:
        on_wave(slots)
    if callable(getattr(policy, "reset", None)):  # LeRobot's policies have it; a user's may not
        _guarded(policy, policy.reset, f"reset() before episodes {ids[0]}..{ids[-1]}", 0, done)
    acc = _Accumulator(n)
    out: dict[int, EpisodeRecord] = {}
    step = 0
    while len(out) < len(ids):
        actions = _act(policy, obs, f"step {step} of episodes {ids[0]}..{ids[-1]}", step, done + sorted(out.values()))
        try:
            obs, reward, terminated, truncated, infos = env.step(actions)
        except InputError as exc:
            raise PolicyError(f"policy {policy_name(policy)!r} at step {step} of episodes {ids[0]}..{ids[-1]}: "
                              f"{exc}", policy_name(policy), step, done + sorted(out.values())) from None
        acc.add(reward, infos)
        if on_step is not None:
            on_step(step, infos)
        for e in np.flatnonzero(terminated | truncated):
            if e < len(ids) and ids[e] not in out:
                out[ids[e]] = acc.record(int(e), ids[e], seed_of(ids[e]) if scenes is None else None, infos)
                if on_episode is not None:
                    on_episode(out[ids[e]])
        step += 1
    return [out[i] for i in ids]


def _act(policy, obs: dict, where: str, step: int, done: list) -> np.ndarray:
    return as_actions(_guarded(policy, lambda: policy.select_action(obs), where, step, done))


def as_actions(actions) -> np.ndarray:
    """A policy's actions as a numpy array (a torch tensor, as a LeRobot policy returns, moved to the CPU)."""
    return np.asarray(actions) if not hasattr(actions, "numpy") else np.asarray(actions.detach().cpu().numpy())


def _guarded(policy, call, where: str, step: int, done: list):
    """``call()`` of a user's policy: any failure, a ``sys.exit`` included, is a PolicyError naming the policy and
    where; a Ctrl-C or SIGTERM stays what it is (the command says it was stopped)."""
    name = policy_name(policy)
    try:
        return call()
    except AppError as exc:
        raise PolicyError(f"policy {name!r} at {where}: {exc}", name, step, done) from None
    except (Exception, SystemExit) as exc:  # a user's policy: any failure is reported as the policy's, with its step
        if (stop := signal_behind(exc)) is not None:  # a Ctrl-C or SIGTERM that landed in a compiled kernel
            raise stop from None
        said = f"called sys.exit({exc.code!r}) at {where}" if isinstance(exc, SystemExit) else \
            f"raised at {where}: {type(exc).__name__}: {' '.join(str(exc).split())}"
        raise PolicyError(f"policy {name!r} {said}", name, step, done) from None


class _Accumulator:
    """Per environment slot: the running reward sum and max, stall causes, limit excess and collisions."""

    def __init__(self, n: int):
        self.sum, self.max = np.zeros(n), np.full(n, -np.inf)
        self.causes = [Counter() for _ in range(n)]
        self.excess, self.collided = np.zeros(n), np.zeros(n, bool)

    def add(self, reward: np.ndarray, infos: dict) -> None:
        self.sum += reward
        self.max = np.maximum(self.max, reward)
        self.excess = np.maximum(self.excess, infos.get("limit_excess", 0.0))
        self.collided |= np.asarray(infos.get("collided", False), dtype=bool)
        for e, cause in enumerate(infos.get("stall_cause", [""] * len(self.sum))):
            if cause:
                self.causes[e][cause] += 1

    def record(self, e: int, index: int, seed: int | None, infos: dict) -> EpisodeRecord:
        return EpisodeRecord(index, seed, bool(infos["is_success"][e]), str(infos["reason"][e]),
                             float(self.sum[e]), float(self.max[e]), int(infos["episode_steps"][e]),
                             int(infos["stall_steps"][e]), dict(self.causes[e]), float(self.excess[e]),
                             bool(self.collided[e]), float(infos["place_error_m"][e]), _motion(infos, e))


def _motion(infos: dict, e: int) -> dict:
    """Environment e's ``motion_*`` info keys at its episode's end (plain str and float)."""
    out = {}
    for key, values in infos.items():
        if key.startswith("motion_") and infos.get(f"_{key}", np.ones(e + 1, bool))[e]:
            value = values[e]
            out[key.removeprefix("motion_")] = value if isinstance(value, str) else (
                int(value) if isinstance(value, (int, np.integer)) else float(value))
    return out
