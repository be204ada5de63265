"""Marks for a rollout's pictures as it goes: after each sample, every environment whose newest sample passes a
limit (its velocity, acceleration or jerk, commanded or simulated: the motion report's backward differences, of the
newest sample only, of all environments at once) is flagged with that event in a few words, kept until ``take``.
Made only where someone looks (a video, a window): a run without pictures pays nothing for it."""

from __future__ import annotations

import numpy as np

from app.quality.limits import TOLERANCE, MotionLimits
from app.quality.motion_report import QUANTITIES, MotionEvent, limit_ratios

WINDOW = 4  # samples: a jerk needs three differences
# the newest sample's backward differences of positions (oldest first): velocity, acceleration, jerk (times 1/dt^k)
FROM_POSITIONS = (np.array([0.0, 0.0, -1.0, 1.0]), np.array([0.0, 1.0, -2.0, 1.0]), np.array([-1.0, 3.0, -3.0, 1.0]))
# and of measured velocities: the velocity itself, then its first and second differences
FROM_VELOCITIES = (np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0, -1.0, 1.0]), np.array([0.0, 1.0, -2.0, 1.0]))


class LiveFlags:
    """The last WINDOW samples of ``n_envs`` environments' judged joints (one per limit) and what each newest one
    passed; every array handed in holds those joints only, (n_envs, n)."""

    def __init__(self, limits: MotionLimits, n_envs: int, dt: float):
        self.limits, self.dt = limits, float(dt)
        n = len(limits.names)
        self._q, self._cmd, self._v = (np.zeros((WINDOW, n_envs, n)) for _ in range(3))
        self._pending = [""] * n_envs

    def reset(self, envs, q: np.ndarray, v: np.ndarray) -> None:
        """Environments ``envs`` start again where they are: their window filled with that state (no difference
        across the restart), their flag cleared."""
        for e in envs:
            self._q[:, e] = self._cmd[:, e] = q[e]
            self._v[:, e] = v[e]
            self._pending[e] = ""

    def update(self, q: np.ndarray, v: np.ndarray | None, q_cmd: np.ndarray | None) -> None:
        """One sample of every environment (n_envs, n; v None: the positions differenced; q_cmd None or NaN:
        commanded where measured)."""
        cmd = q if q_cmd is None else np.where(np.isnan(q_cmd), q, q_cmd)
        for ring, row in ((self._q, q), (self._cmd, cmd), (self._v, np.zeros_like(q) if v is None else v)):
            ring[:-1] = ring[1:]
            ring[-1] = row
        for source, x, weights in (("commanded", self._cmd, FROM_POSITIONS),
                                   ("simulated", self._q if v is None else self._v,
                                    FROM_POSITIONS if v is None else FROM_VELOCITIES)):
            for k, (quantity, w) in enumerate(zip(QUANTITIES, weights)):
                power = k + 1 if v is None or source == "commanded" else k
                value = np.tensordot(w, x, axes=1) / self.dt ** power  # (n_envs, n)
                self._flag(source, quantity, value)

    def _flag(self, source: str, quantity: str, value: np.ndarray) -> None:
        limit = getattr(self.limits, quantity)
        ratio = limit_ratios(value, limit)
        for e in np.flatnonzero((ratio > 1.0 + TOLERANCE).any(axis=1)):
            if not self._pending[e]:
                j = int(np.argmax(ratio[e]))
                self._pending[e] = MotionEvent(0.0, self.limits.names[j], source, quantity, float(value[e, j]),
                                               float(limit[j])).short()

    def take(self) -> tuple[str, ...]:
        """Per environment what it passed since the last take ('' for nothing), and the flags cleared."""
        out, self._pending = tuple(self._pending), [""] * len(self._pending)
        return out
