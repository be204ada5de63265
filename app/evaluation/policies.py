"""The policies ``app.eval`` runs: built-in (``expert``: the scripted motion, app.evaluation.expert; ``random``:
uniform actions from the action space, seeded), a recorded dataset's actions (:class:`ReplayPolicy`), or a
user's ``module:factory`` (a function that takes the vector environment and returns a policy with
``select_action(observation) -> actions``, batched)."""

from __future__ import annotations

import importlib

import numpy as np

from app.dataset import RecordedDataset, convert
from app.dataset.load import dataset_units
from app.errors import InputError
from app.evaluation.expert import ExpertPolicy
from app.runtime.command import signal_behind

BUILT_IN = ("expert", "random")


class RandomPolicy:
    """Uniform actions in the environment's single action space, from a generator seeded ``seed``."""

    name = "random"

    def __init__(self, env, seed: int = 0):
        self.space, self.n, self.seed = env.single_action_space, env.num_envs, seed
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def select_action(self, observation: dict) -> np.ndarray:
        del observation
        return self.rng.uniform(self.space.low, self.space.high, (self.n, self.space.shape[0])).astype(np.float32)


class ReplayPolicy:
    """Plays episodes of a recorded dataset: the environment slot that plays evaluation episode i plays dataset
    episode ``episodes[i]``'s actions row by row (SI units: a dataset in Trossen's units is converted), holding
    the last row when they run out. Needs the environment's ``joint`` action mode at the dataset's rate.
    :meth:`start_wave` (the runner's ``on_wave``) says which episode each slot plays."""

    name = "replay"

    def __init__(self, env, dataset: RecordedDataset, episodes: list[int]):
        core = env.core
        if core.options.action_mode != "joint":
            raise InputError(f"a replay plays joint actions; the environment's action mode is "
                             f"{core.options.action_mode!r} (use --action-mode joint)")
        if abs(dataset.fps - core.fps) > 1e-6:
            raise InputError(f"the dataset is recorded at {dataset.fps:g} fps and the environment steps at "
                             f"{core.fps:g}; give --fps {dataset.fps:g}")
        if list(dataset.action_names) != list(core.world.layout.names):
            raise InputError(f"the dataset's actions {list(dataset.action_names)[:3]}... are not the environment's "
                             f"{list(core.world.layout.names)[:3]}... ({len(core.world.layout.names)} values)")
        units = dataset_units(dataset).units
        self.actions = [convert(dataset.episodes[k].action, units, "si") for k in episodes]
        self.slots: list[int] = []
        self.step = 0

    def start_wave(self, slots: list[int]) -> None:
        self.slots, self.step = list(slots), 0

    def select_action(self, observation: dict) -> np.ndarray:
        del observation
        rows = [self.actions[i][min(self.step, len(self.actions[i]) - 1)] for i in self.slots]
        self.step += 1
        return np.array(rows, dtype=np.float32)


def make_policy(spec: str, env, seed: int = 0):
    """The policy ``spec`` names: ``expert``, ``random`` or ``module:factory`` (factory(env) -> policy);
    InputError saying what is allowed for anything else."""
    if spec == "expert":
        return ExpertPolicy(env)
    if spec == "random":
        return RandomPolicy(env, seed)
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise InputError(f"--policy {spec!r}: give 'expert', 'random' or 'module:factory' (a function that takes "
                         "the environment and returns a policy with select_action(observation))")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except (Exception, SystemExit) as exc:  # a user's module: a SyntaxError, an error or exit at its import
        if (stop := signal_behind(exc)) is not None:
            raise stop from None
        raise InputError(f"--policy {spec!r}: cannot load it: {type(exc).__name__}: {_said(exc)}") from None
    try:
        policy = factory(env)
    except (Exception, SystemExit) as exc:  # a user's factory: its failure is reported as its own
        if (stop := signal_behind(exc)) is not None:
            raise stop from None
        raise InputError(f"--policy {spec!r}: the factory raised {type(exc).__name__}: {_said(exc)}") from None
    if not callable(getattr(policy, "select_action", None)):
        raise InputError(f"--policy {spec!r}: the factory returned a {type(policy).__name__}, which has no "
                         "select_action(observation) method")
    return policy


def _said(exc: BaseException) -> str:
    """An exception's message on one line (a SyntaxError names its file and line)."""
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} ({exc.filename}, line {exc.lineno})"
    if isinstance(exc, SystemExit):
        return f"the policy called sys.exit({exc.code!r})"
    return " ".join(str(exc).split())
