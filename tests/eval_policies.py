"""Policies for the app.eval tests, loaded by ``--policy tests.eval_policies:<factory>`` as a user's would be."""

import numpy as np


class _Hold:
    """Holds every environment's joints where they are (joint mode); misbehaves as its subclasses say."""

    name = "hold"

    def __init__(self, env):
        self.n, self.dim, self.calls, self.wave = env.num_envs, env.single_action_space.shape[0], 0, 0

    def reset(self):
        """A wave of episodes starts (the evaluation calls it)."""
        self.wave += 1
        self.calls = 0

    @property
    def failing(self):
        return self.wave >= 2 and self.calls > 5  # misbehaves in the second wave, at its step 5

    def select_action(self, observation):
        self.calls += 1
        return np.asarray(observation["agent_pos"], dtype=np.float32)


class _RaisesLater(_Hold):
    name = "raises-later"

    def select_action(self, observation):
        if self.wave >= 2 and self.calls >= 5:
            raise RuntimeError("the network's weights are missing")
        return super().select_action(observation)


class _WrongShape(_Hold):
    name = "wrong-shape"

    def select_action(self, observation):
        action = super().select_action(observation)
        return action[:, :3] if self.failing else action


class _NaNLater(_Hold):
    name = "nan-later"

    def select_action(self, observation):
        action = super().select_action(observation)
        if self.failing:
            action[0, 2] = np.nan
        return action


class _SignalInKernel(_Hold):
    """What a SIGTERM that lands while a numba kernel runs looks like to the policy's caller: CPython's SystemError
    ("returned a result with an exception set") caused by the handler's exception."""

    name = "signal-in-kernel"

    def select_action(self, observation):
        if self.failing:
            from app.runtime.command import Terminated

            raise SystemError("CPUDispatcher(<function kernel>) returned a result with an exception set") \
                from Terminated()
        return super().select_action(observation)


class _ExitsLater(_Hold):
    name = "exits-later"

    def select_action(self, observation):
        if self.wave >= 2 and self.calls >= 5:
            raise SystemExit(0)
        return super().select_action(observation)


class _ResetRaises(_Hold):
    name = "reset-raises"

    def reset(self):
        super().reset()
        if self.wave >= 2:
            raise ValueError("no checkpoint for wave 2")


def exits_later(env):
    return _ExitsLater(env)


def reset_raises(env):
    return _ResetRaises(env)


def exits_in_factory(env):
    raise SystemExit("bye")


def signal_in_kernel(env):
    return _SignalInKernel(env)


def hold(env):
    return _Hold(env)


def raises_later(env):
    return _RaisesLater(env)


def wrong_shape(env):
    return _WrongShape(env)


def nan_later(env):
    return _NaNLater(env)


def not_a_policy(env):
    return object()


class _JumpsOnce(_Hold):
    """Holds, but from its 10th step asks the first joint for 0.6 rad more than where it is: one jump, as an
    action chunk that starts away from where the last one led."""

    name = "jumps-once"

    def select_action(self, observation):
        action = super().select_action(observation)
        if self.calls == 10:
            self.target = action[:, 0] + 0.6
        if self.calls >= 10:
            action[:, 0] = self.target
        return action


def jumps_once(env):
    return _JumpsOnce(env)
