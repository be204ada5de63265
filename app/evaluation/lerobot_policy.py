"""A LeRobot policy folder (``pretrained_model/``: ``config.json``, ``model.safetensors`` and the processor
pipelines ``lerobot-train`` saves) run in our vector environment as ``lerobot-eval`` runs it: each step the
batched observation goes through lerobot's own ``preprocess_observation`` (``pixels`` -> ``observation.images.*``
float CHW in [0, 1], ``agent_pos`` -> ``observation.state``, ``environment_state`` ->
``observation.environment_state``: the objects' poses as app.record writes them), then the policy's saved
preprocessor (normalisation, device), ``select_action`` under ``torch.inference_mode``, the saved postprocessor (unnormalisation); ``reset()``
(the runner calls it before every wave of episodes) empties the policy's action queue.

lerobot and torch are imported here only, when such a policy is asked for: without them it is an InputError
saying what to install. Written against lerobot 0.4.4's API (``PreTrainedConfig.from_pretrained``,
``get_policy_class``, ``make_pre_post_processors``), which 0.5 and 0.6 keep.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from app.errors import InputError

NEEDS = "lerobot (>= 0.4.4, with torch) in this Python: pip install 'lerobot>=0.4.4'"


def _lerobot():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder that fails to load must not turn into a Hub call
    try:
        import torch
        from lerobot.configs.policies import PreTrainedConfig
        from lerobot.envs.utils import preprocess_observation
        from lerobot.policies.factory import get_policy_class, make_pre_post_processors
    except ImportError as exc:
        raise InputError(f"--lerobot-policy needs {NEEDS} ({type(exc).__name__}: {exc})") from None
    return torch, PreTrainedConfig, preprocess_observation, get_policy_class, make_pre_post_processors


LEROBOT_KEYS = ("pixels", "agent_pos", "environment_state")  # what lerobot's preprocess_observation reads


def check_lerobot() -> None:
    """InputError saying what to install where lerobot or torch cannot be imported."""
    _lerobot()


def policy_folder(path: str | Path) -> Path:
    """The folder holding ``config.json`` and ``model.safetensors``: ``path`` itself, or its
    ``pretrained_model/`` (a checkpoint folder) or ``checkpoints/last/pretrained_model/`` (a training output);
    InputError naming what is missing otherwise."""
    root = Path(path)
    for folder in (root, root / "pretrained_model", root / "checkpoints" / "last" / "pretrained_model"):
        if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
            return folder
    raise InputError(f"--lerobot-policy {path}: no LeRobot policy there (a folder with config.json and "
                     "model.safetensors, as lerobot-train writes in checkpoints/*/pretrained_model/)")


def folder_features(folder: Path) -> tuple[dict[str, tuple], int]:
    """(feature -> shape it reads, action length) from a policy folder's ``config.json``, read as JSON (no
    lerobot needed); InputError naming the file where it holds no such features."""
    path = Path(folder) / "config.json"
    try:
        config = json.loads(path.read_text())
        reads = {k: tuple(int(n) for n in f["shape"]) for k, f in config["input_features"].items()}
        return reads, int(config["output_features"]["action"]["shape"][0])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise InputError(f"{path}: not a LeRobot policy config (input_features and output_features.action with "
                         f"shapes): {type(exc).__name__}: {exc}") from None


def check_features(env, reads: dict[str, tuple], acts: int) -> None:
    """InputError, before any episode, where a policy reading ``reads`` (feature -> shape, as its config.json
    has them) and acting with ``acts`` values does not fit ``env``'s observations and action mode: a feature the
    environment does not give, another shape (a camera's size, a state's length), another action length."""
    space = env.single_observation_space
    ours = {f"observation.{'state' if k == 'agent_pos' else k}": space[k].shape
            for k in ("agent_pos", "environment_state") if k in space.spaces}
    if "pixels" in space.spaces:
        ours.update({f"observation.images.{k}": (3, *s.shape[:2]) for k, s in space["pixels"].spaces.items()})
    for key, shape in reads.items():
        if key not in ours:
            raise InputError(f"the LeRobot policy reads {key!r}, which the environment does not give (it "
                             f"gives {sorted(ours)}; see --obs-type, the config's cameras)")
        if tuple(shape) != tuple(ours[key]):
            hint = "--image-size H W" if key.startswith("observation.images.") else \
                "--obs-type, and the dataset it was trained on: environment_state holds the objects' poses then " \
                "the place target"
            raise InputError(f"the LeRobot policy reads {key!r} of shape {tuple(shape)}; the environment gives "
                             f"{tuple(ours[key])} (see {hint})")
    if acts != env.single_action_space.shape[0]:
        raise InputError(f"the LeRobot policy acts with {acts} values; the environment's action mode takes "
                         f"{env.single_action_space.shape[0]} (see --action-mode)")


def checked_overrides(folder: Path, n_action_steps: int | None, temporal_ensemble: float | None) -> tuple:
    """The policy config's values app.eval sets (``(name, value)`` pairs), checked against ``config.json`` before
    any episode: ``n_action_steps`` 1..the chunk the policy predicts (ACT's chunk_size; Diffusion's horizon -
    n_obs_steps + 1), ``temporal_ensemble`` (ACT's temporal_ensemble_coeff, with one action step) > 0 and ACT's only."""
    config = json.loads((Path(folder) / "config.json").read_text())
    out = []
    if temporal_ensemble is not None:
        if config.get("type") != "act" or not temporal_ensemble > 0:
            raise InputError(f"--temporal-ensemble {temporal_ensemble}: a coefficient > 0 for an ACT policy (this one "
                             f"is {config.get('type')!r})")
        out += [("temporal_ensemble_coeff", float(temporal_ensemble)), ("n_action_steps", 1)]
    if n_action_steps is not None:
        chunk = config.get("chunk_size") or (config.get("horizon", 1) - config.get("n_obs_steps", 1) + 1)
        if temporal_ensemble is not None or not 1 <= n_action_steps <= chunk:
            raise InputError(f"--n-action-steps {n_action_steps}: must be 1..{chunk} (the actions this "
                             f"{config.get('type')} policy predicts at a time), and not with --temporal-ensemble")
        out.append(("n_action_steps", int(n_action_steps)))
    return tuple(out)


class LeRobotPolicy:
    """A LeRobot policy folder as our runner's policy (see the module docstring); ``overrides``: config values set
    before the policy is made (checked_overrides)."""

    def __init__(self, env, path: str | Path, overrides: tuple = ()):
        torch, config_cls, self._preprocess, policy_class, make_processors = _lerobot()
        self.torch = torch
        # one thread: a matrix product's sum order then does not depend on the process (Ray workers get one
        # core each, this process two), so an episode's actions do not depend on --workers
        torch.set_num_threads(1)
        folder = policy_folder(path)
        config = config_cls.from_pretrained(str(folder))
        config.device = "cpu" if not torch.cuda.is_available() else config.device
        for name, value in overrides:  # checked_overrides' values, before the policy is made from the config
            setattr(config, name, value)
        self.policy = policy_class(config.type).from_pretrained(str(folder), config=config)
        self.policy.eval()
        self.pre, self.post = make_processors(config, pretrained_path=str(folder), preprocessor_overrides={
            "device_processor": {"device": str(config.device)}})
        self.name = f"lerobot:{config.type}:{folder}"
        self._check_features(env, config)
        self.n = env.num_envs

    def _check_features(self, env, config) -> None:
        check_features(env, {k: tuple(f.shape) for k, f in config.input_features.items()},
                       config.output_features["action"].shape[0])

    def reset(self) -> None:
        self.policy.reset()

    def select_action(self, observation: dict) -> np.ndarray:
        batch = self._preprocess({k: v for k, v in observation.items() if k in LEROBOT_KEYS})
        batch["task"] = [""] * self.n  # lerobot-eval adds the envs' task; ours have none to tell a policy
        batch = self.pre(batch)
        with self.torch.inference_mode():
            action = self.policy.select_action(batch)
        return self.post(action).to("cpu").numpy().astype(np.float32)
