"""LeRobot EnvConfig subclasses for the app's tasks: what ``lerobot-eval --env.type=NAME`` builds.

``gym_id`` is the app's registered id (``app/<task>``); ``gym_kwargs`` are app.envs' options (``obs_type``,
``image_size``, ``config``: another run file of the same task) and the render mode lerobot-eval's videos need.
``features`` (what lerobot's make_policy reads for the action's and observations' shapes) come from one
environment's own spaces, built once when the config is made, so they always match what the environment gives:
``agent_pos`` -> ``observation.state``, ``pixels/<camera>`` -> ``observation.images.<camera>``, ``action``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig

ACTION, OBS_STATE, OBS_ENV, OBS_IMAGES = ("action", "observation.state", "observation.environment_state",
                                         "observation.images")


def _features(task: str, kwargs: dict) -> tuple[dict, dict]:
    """(features, features_map) of one environment of ``app/<task>`` made with ``kwargs``."""
    import gymnasium as gym

    env = gym.make(f"app/{task}", **kwargs)
    try:
        obs, act = env.observation_space, env.action_space
        features = {ACTION: PolicyFeature(type=FeatureType.ACTION, shape=tuple(act.shape))}
        names = {ACTION: ACTION}
        if "agent_pos" in obs.spaces:
            features["agent_pos"] = PolicyFeature(type=FeatureType.STATE, shape=tuple(obs["agent_pos"].shape))
            names["agent_pos"] = OBS_STATE
        if "environment_state" in obs.spaces:  # the objects' poses, as app.record writes them
            features["environment_state"] = PolicyFeature(type=FeatureType.ENV,
                                                          shape=tuple(obs["environment_state"].shape))
            names["environment_state"] = OBS_ENV
        for cam, space in (obs["pixels"].spaces.items() if "pixels" in obs.spaces else ()):
            features[f"pixels/{cam}"] = PolicyFeature(type=FeatureType.VISUAL, shape=tuple(space.shape))
            names[f"pixels/{cam}"] = f"{OBS_IMAGES}.{cam}"
        return features, names
    finally:
        env.close()


@dataclass
class _AppEnv(EnvConfig):
    """Options shared by the app's tasks (the EnvConfig fields: task, fps, features, features_map...)."""

    fps: int = 30  # the run configs' video rate, the rate app.record writes and the environments step at
    episode_length: int | None = None  # steps before truncation (None: the registered id's own time limit)
    obs_type: str = "pixels_agent_pos"
    action_mode: str = "joint"  # or "ee_pose": per arm the end effector's pose and the finger (app.learn's default)
    image_height: int | None = None  # every camera's size [px] (None: each camera's own from the run config)
    image_width: int | None = None
    config: str | None = None  # another run config of the task (None: the id's own)
    render_mode: str = "rgb_array"
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.features:
            self.features, self.features_map = _features(self.task, self._options())

    @property
    def package_name(self) -> str:
        return "app"  # gym_id is app/<task>; importing app registers it

    def _options(self) -> dict:
        out = {"obs_type": self.obs_type, "action_mode": self.action_mode, "fps": self.fps}
        if (self.image_height is None) != (self.image_width is None):
            raise ValueError("give both image_height and image_width, or neither")
        if self.image_height is not None:
            out["image_size"] = (self.image_height, self.image_width)
        if self.config is not None:
            out["config"] = self.config
        return out

    @property
    def gym_kwargs(self) -> dict:
        out = {**self._options(), "render_mode": self.render_mode}
        if self.episode_length is not None:
            out["max_episode_steps"] = self.episode_length
        return out


@EnvConfig.register_subclass("widowx_ai")
@dataclass
class WidowXAIEnv(_AppEnv):
    """The WidowX AI picks a 5 cm cube and places it (app/WidowXAIPickCube-v0): 7 joint targets per step."""

    task: str | None = "WidowXAIPickCube-v0"


@EnvConfig.register_subclass("stationary_ai_handover")
@dataclass
class StationaryAIHandoverEnv(_AppEnv):
    """The Stationary AI's left arm hands a cube to the right one (app/StationaryAIHandover-v0): 14 values."""

    task: str | None = "StationaryAIHandover-v0"


@EnvConfig.register_subclass("widowx_ai_stack")
@dataclass
class WidowXAIStackEnv(_AppEnv):
    """The WidowX AI stacks a 4 cm cube on a 6 cm one (app/WidowXAIStack-v0): 7 joint targets per step."""

    task: str | None = "WidowXAIStack-v0"


@EnvConfig.register_subclass("widowx_ai_place_in_bin")
@dataclass
class WidowXAIPlaceInBinEnv(_AppEnv):
    """The WidowX AI puts a cube into a walled bin (app/WidowXAIPlaceInBin-v0): 7 joint targets per step."""

    task: str | None = "WidowXAIPlaceInBin-v0"


@EnvConfig.register_subclass("widowx_ai_push")
@dataclass
class WidowXAIPushEnv(_AppEnv):
    """The WidowX AI pushes a cube to a target with its fingers closed (app/WidowXAIPush-v0): 7 values."""

    task: str | None = "WidowXAIPush-v0"


@EnvConfig.register_subclass("widowx_ai_peg_in_hole")
@dataclass
class WidowXAIPegInHoleEnv(_AppEnv):
    """The WidowX AI inserts a round peg into a hole 4 mm wider (app/WidowXAIPegInHole-v0): 7 values."""

    task: str | None = "WidowXAIPegInHole-v0"


@EnvConfig.register_subclass("stationary_ai_bimanual_lift")
@dataclass
class StationaryAIBimanualLiftEnv(_AppEnv):
    """The Stationary AI's two arms lift a bar level (app/StationaryAIBimanualLift-v0): 14 values per step."""

    task: str | None = "StationaryAIBimanualLift-v0"


@EnvConfig.register_subclass("stationary_ai_bimanual_insertion")
@dataclass
class StationaryAIBimanualInsertionEnv(_AppEnv):
    """The Stationary AI inserts a peg into a socket, one part in each hand (app/StationaryAIBimanualInsertion-v0)."""

    task: str | None = "StationaryAIBimanualInsertion-v0"
