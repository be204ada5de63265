"""Marks for a rollout's pictures as it goes: after each sample, every environment whose newest sample passes a
limit (its velocity, acceleration or jerk, commanded or simulated: the motion report's own differences over the
last four samples of all environments at once) is flagged with that event in a few words, kept until ``take``."""

from __future__ import annotations

import numpy as np

from app.quality.limits import TOLERANCE, MotionLimits
from app.quality.motion_report import QUANTITIES, MotionEvent, derivatives, limit_ratios

WINDOW = 4  # samples: a jerk needs three differences


class LiveFlags:
    """The last WINDOW samples of ``n_envs`` environments' DOFs ``dofs`` and what each newest one passed."""

    def __init__(self, limits: MotionLimits, dofs: np.ndarray, n_envs: int, dt: float):
        self.limits, self.dofs, self.dt = limits, np.asarray(dofs, dtype=int), float(dt)
        n = len(self.dofs)
        self._q, self._cmd, self._v = (np.zeros((WINDOW, n_envs, n)) for _ in range(3))
        self._pending = [""] * n_envs

    def reset(self, envs, q: np.ndarray, v: np.ndarray) -> None:
        """Environments ``envs`` start again at rest where they are: their window filled with that state (no
        difference across the restart), their flag cleared."""
        for e in envs:
            self._q[:, e] = self._cmd[:, e] = q[e, self.dofs]
            self._v[:, e] = v[e, self.dofs]
            self._pending[e] = ""

    def update(self, q: np.ndarray, v: np.ndarray | None, q_cmd: np.ndarray | None) -> None:
        """One sample of every environment (n_envs, n_all_dofs; v None: the positions differenced; q_cmd None or
        NaN: commanded where measured)."""
        q_now = q[:, self.dofs]
        cmd = q_now if q_cmd is None else np.where(np.isnan(q_cmd[:, self.dofs]), q_now, q_cmd[:, self.dofs])
        v_now = np.zeros_like(q_now) if v is None else v[:, self.dofs]
        for ring, row in ((self._q, q_now), (self._cmd, cmd), (self._v, v_now)):
            ring[:-1] = ring[1:]
            ring[-1] = row
        n_envs, n = q_now.shape
        for source, x, vel in (("commanded", self._cmd, None), ("simulated", self._q, None if v is None else self._v)):
            values = derivatives(x.reshape(WINDOW, -1), self.dt, None if vel is None else vel.reshape(WINDOW, -1))
            for quantity, d in zip(QUANTITIES, values):
                limit = getattr(self.limits, quantity)
                ratio = limit_ratios(d[0, -1].reshape(n_envs, n), limit)
                for e in np.flatnonzero((ratio > 1.0 + TOLERANCE).any(axis=1)):
                    if not self._pending[e]:
                        j = int(np.argmax(ratio[e]))
                        self._pending[e] = MotionEvent(0.0, self.limits.names[j], source, quantity,
                                                       float(ratio[e, j] * limit[j]), float(limit[j])).short()

    def take(self) -> tuple[str, ...]:
        """Per environment what it passed since the last take ('' for nothing), and the flags cleared."""
        out, self._pending = tuple(self._pending), [""] * len(self._pending)
        return out
