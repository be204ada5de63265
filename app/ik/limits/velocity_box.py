"""A given velocity box lo <= qdot <= hi (per configuration), intersected with the joint box."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.errors import InputError
from app.ik.qp import INF, Inequalities
from app.kernels.dispatch import kernel_array


class VelocityBoxParams(NamedTuple):
    """lo, hi (B, n); active False: no bounds."""

    active: bool
    lo: np.ndarray
    hi: np.ndarray


def inactive_velocity_box(batch: int, n: int) -> VelocityBoxParams:
    return VelocityBoxParams(False, np.full((batch, n), -INF), np.full((batch, n), INF))


class VelocityBox:
    """Bounds lo <= qdot <= hi: (n,) for every configuration or (B, n)."""

    slot = "velocity_box"

    def __init__(self, lo: object, hi: object):
        lo, hi = np.atleast_2d(np.asarray(lo, dtype=float)), np.atleast_2d(np.asarray(hi, dtype=float))
        if lo.shape != hi.shape or lo.ndim != 2 or np.any(lo > hi):
            raise InputError(f"VelocityBox needs lo <= hi of one shape (n,) or (B, n), got {lo.shape}, {hi.shape}")
        self._lo, self._hi = np.clip(lo, -INF, INF), np.clip(hi, -INF, INF)

    def params(self, batch: int) -> VelocityBoxParams:
        shape = (batch, self._lo.shape[1])
        if len(self._lo) not in (1, batch):
            raise InputError(f"VelocityBox has bounds for {len(self._lo)} configurations, got {batch}")
        f = lambda a: kernel_array(np.broadcast_to(a, shape))  # noqa: E731
        return VelocityBoxParams(True, f(self._lo), f(self._hi))

    def compute_qp_inequalities(self, batch: int = 1) -> Inequalities:
        p = self.params(batch)
        return Inequalities(np.eye(p.lo.shape[1]), p.lo, p.hi)
