"""An evaluation in jobs: one wave of ``num_envs`` episodes each (the same waves whatever the number of workers, so
a seed's episode does not depend on it), run here (one worker) or on Ray workers (app.runtime.work_pool
.run_everywhere, as app.sweep shards its episodes), each process keeping its environment and policy between
its jobs. A job travels as data (the run, the options, what the policy is), never as live objects."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from app.config.schema import RunConfig
from app.dataset import load_dataset
from app.envs.options import EnvOptions
from app.envs.vector_env import ManipulationVectorEnv
from app.errors import InputError
from app.evaluation.policies import ReplayPolicy, make_policy
from app.evaluation.runner import EpisodeRecord, evaluate
from app.evaluation.smoothing import LowPassActions
from app.evaluation.videos import EvalVideos


class PolicySpec(NamedTuple):
    """What the policy is: kind 'policy' (value: expert, random or module:factory), 'replay' (value: the dataset;
    episodes: the dataset episode each evaluation episode plays) or 'lerobot' (value: a LeRobot policy folder), and
    the remedies for jerky actions applied to it."""

    kind: str
    value: str
    episodes: tuple[int, ...] = ()
    overrides: tuple = ()  # a LeRobot policy's config values set (app.evaluation.lerobot_policy.checked_overrides)
    action_filter: float | None = None  # the low-pass on its actions (app.evaluation.smoothing); None: none


class EvalJob(NamedTuple):
    """Episodes ``first``..``first + n - 1`` of an evaluation: the run, options and environments per wave, the
    policy, the base seed, every episode's scene (None: seeded draws), videos of episodes below ``videos`` into
    ``video_dir``."""

    run: RunConfig
    options: EnvOptions
    num_envs: int
    policy: PolicySpec
    seed: int
    first: int
    n: int
    scenes: tuple | None
    videos: int
    video_dir: str
    token: str = ""  # the evaluation's: a process's jobs of one evaluation share its environment and policy


_HERE: dict = {}  # this process's environment and policy, kept between its jobs (key: what made them)


def _env_and_policy(job: EvalJob):
    key = job.token
    if _HERE.get("key") != key or not key:
        if "env" in _HERE:
            _HERE["env"].close()
        env = ManipulationVectorEnv(job.run, job.num_envs, job.options)
        _HERE.update(key=key, env=env, policy=build_policy(job.policy, env, job.seed))
    return _HERE["env"], _HERE["policy"]


def build_policy(spec: PolicySpec, env, seed: int):
    """The policy a PolicySpec names, for ``env``, its actions low-passed where the spec asks."""
    policy = _named_policy(spec, env, seed)
    if spec.action_filter is None:
        return policy
    return LowPassActions(policy, spec.action_filter, env.core.options.action_mode)


def _named_policy(spec: PolicySpec, env, seed: int):
    if spec.kind == "replay":
        try:
            return ReplayPolicy(env, load_dataset(spec.value), list(spec.episodes))
        except InputError as exc:  # a dataset that does not fit this config's environment: both named
            raise InputError(f"--replay {spec.value} in {env.core.run.name}'s environment: {exc}") from None
    if spec.kind == "lerobot":
        from app.evaluation.lerobot_policy import LeRobotPolicy  # lerobot and torch only for this kind

        return LeRobotPolicy(env, spec.value, spec.overrides)
    return make_policy(spec.value, env, seed)


def run_job(job: EvalJob) -> list[EpisodeRecord]:
    """The job's episodes (module-level: it travels to Ray workers)."""
    env, policy = _env_and_policy(job)
    videos = EvalVideos(env, job.videos, Path(job.video_dir), policy_title(job.policy)) \
        if job.first < job.videos else None
    hooks = [h for h in (getattr(policy, "start_wave", None), videos.wave if videos else None) if h is not None]
    try:
        return evaluate(env, policy, job.n, job.seed, None if job.scenes is None else list(job.scenes),
                        on_episode=videos.on_episode if videos else None, on_step=videos.on_step if videos else None,
                        on_wave=lambda slots: [h(slots) for h in hooks], first=job.first)
    finally:
        if videos is not None:
            videos.close()


def policy_title(spec: PolicySpec) -> str:
    return {"policy": spec.value, "replay": "replay", "lerobot": "lerobot"}[spec.kind]


def close_here() -> None:
    """Close this process's environment (the command's own, at its end)."""
    if "env" in _HERE:
        _HERE.pop("env").close()
    _HERE.clear()
