"""The registered environment ids (``gym.make("app/<Task>-v0")``) and the factories for any run config.

- ``app/WidowXAIPickCube-v0``: the WidowX AI picks a 5 cm cube and places it (configs/pick_place_cameras.yaml:
  cameras ``cam_high`` and ``cam_low``, 640 x 480);
- ``app/StationaryAIHandover-v0``: the Stationary AI's left arm hands a cube to the right one, which places it
  (configs/handover.yaml; no scene cameras: a default ``cam_high``);
- one id per task of app.tasks that names one (its ``env_id``, on its ``config``): ``app/WidowXAIStack-v0``,
  ``app/WidowXAIPlaceInBin-v0``, ``app/WidowXAIPegInHole-v0``, ... (``python -m app.eval --list-tasks``).

Keyword arguments of ``gym.make`` / :func:`make_env` are app.envs.options.EnvOptions' fields (``obs_type``,
``action_mode``, ``cameras``, ``image_size``, ``max_episode_steps``, ``fps``), plus ``config`` (a run file) and
``render_mode``.
"""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium as gym

from app.config.loader import load_run_config
from app.config.schema import RunConfig
from app.envs.options import EnvOptions
from app.envs.single_env import ManipulationEnv
from app.envs.vector_env import ManipulationVectorEnv
from app.errors import InputError
from app.tasks import MANIPULATION

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
ENV_IDS = {"app/WidowXAIPickCube-v0": "pick_place_cameras.yaml", "app/StationaryAIHandover-v0": "handover.yaml",
           **{cls.env_id: str(Path(cls.config).relative_to("configs")) for cls in MANIPULATION.values() if cls.env_id}}
OPTION_NAMES = ("obs_type", "action_mode", "cameras", "image_size", "max_episode_steps", "fps")


def _run(config: str | Path | RunConfig) -> RunConfig:
    return config if isinstance(config, RunConfig) else load_run_config(config)


def _options(kwargs: dict) -> EnvOptions:
    unknown = sorted(set(kwargs) - set(OPTION_NAMES))
    if unknown:
        raise InputError(f"unknown environment options {unknown}; the options are {list(OPTION_NAMES)}")
    if isinstance(kwargs.get("cameras"), (list, str)):
        kwargs["cameras"] = tuple([kwargs["cameras"]] if isinstance(kwargs["cameras"], str) else kwargs["cameras"])
    if isinstance(kwargs.get("image_size"), list):
        kwargs["image_size"] = tuple(kwargs["image_size"])
    return EnvOptions(**kwargs).check()


def make_env(config: str | Path | RunConfig, render_mode: str | None = None, **options) -> ManipulationEnv:
    """One environment of a run config (a path, as ``app.run`` takes it, or a loaded RunConfig)."""
    return ManipulationEnv(_run(config), _options(options), render_mode)


def make_vec_env(config: str | Path | RunConfig, num_envs: int, autoreset_mode: str = "NextStep",
                 **options) -> ManipulationVectorEnv:
    """``num_envs`` environments of a run config in one world (app.envs.vector_env)."""
    return ManipulationVectorEnv(_run(config), num_envs, _options(options), autoreset_mode)


def _entry(config: str, render_mode: str | None = None, **options) -> ManipulationEnv:
    return make_env(CONFIGS / config if not Path(config).is_absolute() else config, render_mode, **options)


def register_envs() -> None:
    """Register every id of ENV_IDS with Gymnasium (once; importing app.envs does it), each with its time limit
    (the config's duration at its video rate, the rate app.record writes)."""
    for env_id, config in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        run = load_run_config(CONFIGS / config)
        gym.register(env_id, entry_point=_entry, kwargs={"config": config},
                     max_episode_steps=math.ceil(run.duration * run.video.fps), disable_env_checker=False)


register_envs()
