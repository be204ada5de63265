"""One environment of a run config as a ``gymnasium.Env`` (what ``gym.make`` and LeRobot's vector envs wrap)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from app.config.schema import RunConfig
from app.envs.core import EnvCore, not_copyable
from app.envs.options import EnvOptions
from app.envs.pixels import Pixels
from app.episode.episode_scene import EpisodeScene
from app.errors import InputError
from app.specs import CameraStream

SEED_RANGE = 2**31 - 1  # an episode's scene seed is drawn from the environment's generator in [0, SEED_RANGE)


class ManipulationEnv(gym.Env):
    """A pick-and-place, hand-over (or any run config's) episode as a Gymnasium environment.

    ``reset(seed=s)`` seeds the environment's generator (``np_random``); every episode's scene seed is drawn from
    it, so one seed gives the same sequence of episodes, and ``options={"scene": EpisodeScene | dict}`` starts one
    given scene instead (a recorded episode's). Observations, actions, rewards and infos: app.envs.core.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, run: RunConfig, options: EnvOptions | None = None, render_mode: str | None = None):
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise InputError(f"render_mode must be one of {self.metadata['render_modes']} (or None), got "
                             f"{render_mode!r:.40}")
        self.core = EnvCore(run, 1, options or EnvOptions())
        self.observation_space = self.core.observation_space
        self.action_space = self.core.action_space
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "render_fps": self.core.fps}
        self.task = run.motion.type
        # lerobot-eval asks every sub-environment for it (env.call, which an AsyncVectorEnv's worker does not
        # survive when it is missing); the text app.record writes as each episode's task, so a policy that
        # reads the task sees what it was trained on
        self.task_description = self.task
        self._render_camera = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        scene = (options or {}).get("scene")
        if scene is None:
            scene = self.core.draw(int(self.np_random.integers(SEED_RANGE)))
        elif not isinstance(scene, EpisodeScene):
            scene = EpisodeScene.from_dict(scene, self.core.run, "reset(options={'scene': ...})")
        self.core.reset(np.array([0]), [scene])
        return self._one(self.core.observe()), {"is_success": False, "scene": scene.as_dict()}

    def step(self, action) -> tuple[dict, float, bool, bool, dict]:
        obs, reward, terminated, truncated, infos = self.core.step(np.asarray(action)[None])
        return self._one(obs), float(reward[0]), bool(terminated[0]), bool(truncated[0]), infos[0]

    def render(self) -> np.ndarray | None:
        """The first observed camera's picture (``rgb_array``), or the default camera's where none is observed."""
        if self.render_mode != "rgb_array":
            return None
        if self.core.pixels is None:
            if self._render_camera is None:
                self._render_camera = Pixels(self.core.world, [CameraStream()])
            views = self._render_camera
        else:
            views = self.core.pixels
        images = views.render(self.core.world.robot.read_states()[0], places=self.core.places())
        return next(iter(images.values()))[0]

    @staticmethod
    def _one(obs: dict) -> dict:
        return {k: ({c: v[0] for c, v in x.items()} if isinstance(x, dict) else x[0]) for k, x in obs.items()}

    def __deepcopy__(self, memo):
        raise not_copyable(self)

    def __reduce__(self):
        raise not_copyable(self)

    def close(self) -> None:
        if self._render_camera is not None:
            self._render_camera.close()
        self.core.close()
