"""Gymnasium environments over the app's scenes (``gymnasium`` 1.x): one registered id per task, any run config
through :func:`make_env` / :func:`make_vec_env`. Observations as LeRobot reads them, three action modes, success
and failure reasons judged from the simulator, stalls with their causes. See docs/envs.md."""

from app.envs.options import ACTION_MODES, OBS_TYPES, EnvOptions
from app.envs.registry import ENV_IDS, make_env, make_vec_env, register_envs
from app.envs.single_env import ManipulationEnv
from app.envs.vector_env import ManipulationVectorEnv
from app.episode.episode_scene import EpisodeScene

__all__ = ["ACTION_MODES", "ENV_IDS", "OBS_TYPES", "EnvOptions", "EpisodeScene", "ManipulationEnv",
           "ManipulationVectorEnv", "make_env", "make_vec_env", "register_envs"]
