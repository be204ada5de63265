"""Remedies for a jerky policy that app.eval offers (``--action-filter``; a LeRobot policy's ``--n-action-steps``
and ``--temporal-ensemble`` are its own config's, app.evaluation.lerobot_policy): an exponential low-pass on the
actions, per environment, restarted with every wave of episodes.

    a'_t = alpha a_t + (1 - alpha) a'_{t-1},   a'_0 = a_0

In the ``ee_pose`` mode each arm's quaternion (values 3..6 of its 8) is turned to the previous one's hemisphere
before the blend and normalised after it; every other value (joints, positions, a gripper's closing, ``ee_delta``'s
rotation vectors) is blended as it is. alpha = 1 leaves the actions as they are; smaller is smoother and lags more
(a step reaches 1 - (1 - alpha)^k of its size after k steps)."""

from __future__ import annotations

import numpy as np

from app.errors import InputError
from app.evaluation.runner import as_actions

EE_POSE_ARM = 8  # an ee_pose action's values per arm: position 3, quaternion 4 (w, x, y, z), closing 1


def check_alpha(alpha: float) -> None:
    """InputError unless the low-pass's ``alpha`` is in (0, 1]."""
    if not 0.0 < alpha <= 1.0:
        raise InputError(f"--action-filter must be in (0, 1] (1: no filtering), got {alpha}")


class LowPassActions:
    """``policy`` with its actions low-passed (see the module docstring)."""

    def __init__(self, policy, alpha: float, action_mode: str):
        check_alpha(alpha)
        self.policy, self.alpha, self.quats = policy, float(alpha), action_mode == "ee_pose"
        self.name = f"{getattr(policy, 'name', type(policy).__name__)}+lowpass({alpha:g})"
        self._last: np.ndarray | None = None

    def reset(self) -> None:
        """A wave of episodes starts: nothing to blend with."""
        self._last = None
        if callable(getattr(self.policy, "reset", None)):
            self.policy.reset()

    def start_wave(self, slots: list[int]) -> None:
        if callable(getattr(self.policy, "start_wave", None)):
            self.policy.start_wave(slots)

    def select_action(self, observation: dict) -> np.ndarray:
        a = as_actions(self.policy.select_action(observation)).astype(float)
        if self._last is None or self._last.shape != a.shape:
            self._last = a.copy()
            return a.astype(np.float32)
        if self.quats:
            a = _same_hemisphere(a, self._last)
        out = self.alpha * a + (1.0 - self.alpha) * self._last
        if self.quats:
            out = _normalised(out)
        self._last = out
        return out.astype(np.float32)


def _quat_view(a: np.ndarray) -> np.ndarray:
    """The quaternions of an ee_pose action batch (n, n_arms, 4), a copy."""
    return a.reshape(len(a), -1, EE_POSE_ARM)[..., 3:7].copy()


def _same_hemisphere(a: np.ndarray, last: np.ndarray) -> np.ndarray:
    out = a.reshape(len(a), -1, EE_POSE_ARM).copy()
    flip = np.sum(out[..., 3:7] * _quat_view(last), axis=-1) < 0
    out[..., 3:7] = np.where(flip[..., None], -out[..., 3:7], out[..., 3:7])
    return out.reshape(a.shape)


def _normalised(a: np.ndarray) -> np.ndarray:
    out = a.reshape(len(a), -1, EE_POSE_ARM).copy()
    out[..., 3:7] /= np.maximum(np.linalg.norm(out[..., 3:7], axis=-1, keepdims=True), 1e-12)
    return out.reshape(a.shape)
