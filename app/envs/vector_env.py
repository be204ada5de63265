"""Many environments of a run config in one PyBullet world as a ``gymnasium.vector.VectorEnv``: one batched step
for all (one controller call, one physics loop), each environment reset on its own with its own generator.

Seeds: ``reset(seed=s)`` seeds environment i with s + i (Gymnasium's and ``lerobot-eval``'s convention; a list
gives each its own); each episode's scene seed is then drawn from that environment's generator, as
app.envs.single_env.ManipulationEnv draws it, so environment i of a vector env and a single environment seeded
s + i play the same episodes. Autoreset: ``NEXT_STEP`` (Gymnasium's default: the step after an episode ended
resets that environment and returns its first observation, reward 0) or ``SAME_STEP`` (reset at once; the last
observation and info in ``final_obs`` / ``final_info``). Infos are Gymnasium's dict of arrays with ``_key``
masks; a stall's details (``stall``) are left to the single environment's info, ``stall_cause`` is here.
"""

from __future__ import annotations

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from app.config.schema import RunConfig
from app.envs.core import EnvCore, not_copyable
from app.envs.options import EnvOptions
from app.envs.single_env import SEED_RANGE
from app.episode.episode_scene import EpisodeScene
from app.errors import InputError


class ManipulationVectorEnv(VectorEnv):
    """``num_envs`` environments of ``run`` (see the module docstring)."""

    def __init__(self, run: RunConfig, num_envs: int, options: EnvOptions | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or not 1 <= num_envs <= 1024:
            raise InputError(f"num_envs must be a whole number 1..1024, got {num_envs!r}")
        modes = [m.value for m in AutoresetMode]
        if not isinstance(autoreset_mode, AutoresetMode) and autoreset_mode not in modes:
            raise InputError(f"autoreset_mode must be one of {modes}, got {autoreset_mode!r:.40}")
        self.core = EnvCore(run, num_envs, options or EnvOptions())
        self.num_envs = num_envs
        self.single_observation_space = self.core.observation_space
        self.single_action_space = self.core.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_fps": self.core.fps}
        self._rngs = [seeding.np_random(None)[0] for _ in range(num_envs)]
        self._done = np.zeros(num_envs, bool)

    def reset(self, *, seed: int | list | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Every environment (or those of ``options["reset_mask"]``) starts a new episode; ``options["scenes"]``
        gives each its scene (a list of EpisodeScene or dicts, one per environment reset)."""
        options = options or {}
        mask = _reset_mask(options.get("reset_mask"), self.num_envs)
        seeds = _seeds(seed, self.num_envs)
        envs = np.flatnonzero(mask)
        for e in envs:
            if seeds[e] is not None:
                self._rngs[e] = seeding.np_random(int(seeds[e]))[0]
        given = options.get("scenes")
        scenes = [self._scene(e, None if given is None else given[k]) for k, e in enumerate(envs)]
        self.core.reset(envs, scenes)
        self._done[envs] = False
        infos = {}
        for k, e in enumerate(envs):
            infos = self._add_info(infos, {"is_success": False}, int(e))
        return self.core.observe(), infos

    def _scene(self, e: int, given) -> EpisodeScene:
        if given is None:
            return self.core.draw(int(self._rngs[e].integers(SEED_RANGE)))
        return given if isinstance(given, EpisodeScene) else EpisodeScene.from_dict(
            given, self.core.run, f"reset(options={{'scenes': [...]}}) entry for environment {e}")

    def step(self, actions) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        ended = np.flatnonzero(self._done)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and len(ended):
            self.core.reset(ended, [self._scene(int(e), None) for e in ended])
        obs, reward, terminated, truncated, per_env = self.core.step(actions)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and len(ended):
            reward[ended], terminated[ended], truncated[ended] = 0.0, False, False
            for e in ended:
                per_env[e] = {"is_success": False}
        infos = {}
        for e, info in enumerate(per_env):
            infos = self._add_info(infos, {k: v for k, v in info.items() if k != "stall"}, e)
        self._done = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP and self._done.any():
            obs, infos = self._same_step_reset(obs, infos)
        return obs, reward, terminated, truncated, infos

    def _same_step_reset(self, obs: dict, infos: dict) -> tuple[dict, dict]:
        """Ended environments reset now; their last observation and info kept as final_obs / final_info."""
        ended = np.flatnonzero(self._done)
        final = {"final_obs": obs, "final_info": dict(infos), "_final_obs": self._done.copy(),
                 "_final_info": self._done.copy()}
        self.core.reset(ended, [self._scene(int(e), None) for e in ended])
        self._done[:] = False
        return self.core.observe(), {**infos, **final}

    def close_extras(self, **kwargs) -> None:
        self.core.close()

    def __deepcopy__(self, memo):
        raise not_copyable(self)

    def __reduce__(self):
        raise not_copyable(self)


def _reset_mask(mask, n: int) -> np.ndarray:
    """``reset(options={"reset_mask": ...})`` as (n,) bool; InputError for another length or non-booleans."""
    if mask is None:
        return np.ones(n, bool)
    m = np.asarray(mask)
    if m.shape != (n,) or m.dtype != bool:
        raise InputError(f"reset_mask must be {n} booleans (one per environment), got shape {m.shape} of {m.dtype}")
    return m


def _seeds(seed, n: int) -> list:
    """One seed (or None) per environment from ``reset(seed=...)``: None, a whole number s (s + i), or a list of n
    whole numbers (or None); InputError naming the entry that is not one of them."""
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seeds = [int(seed) + i for i in range(n)]
    elif isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
    else:
        raise InputError(f"reset(seed=...) must be a whole number or a list of {n}, got {type(seed).__name__}")
    if len(seeds) != n:
        raise InputError(f"reset(seed=...) needs one seed per environment ({n}), got {len(seeds)}")
    for i, s in enumerate(seeds):
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < 2**63):
            raise InputError(f"reset(seed=...) entry {i} is {s!r:.40}: seeds are whole numbers 0..2**63-1 or None")
    return seeds
