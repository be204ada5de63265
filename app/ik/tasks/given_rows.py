"""A task given by its rows: J qdot = V for precomputed, already weighted J and V (per
configuration). For objectives computed outside the compiled code, and for tests of the QP."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.errors import InputError


class RowsParams(NamedTuple):
    """J (B, m, n) and V (B, m), weighted; m = 0: no rows."""

    J: np.ndarray
    V: np.ndarray


class RowsTask:
    """Rows J qdot = V, weighted by ``weights`` (m,). J (B, m, n) or (m, n); V (B, m) or (m,)."""

    slot = "rows_task"

    def __init__(self, J: object, V: object, weights: object | None = None):
        J, V = np.asarray(J, dtype=float), np.asarray(V, dtype=float)
        if J.ndim == 2:
            J, V = J[None], V[None]
        if J.ndim != 3 or V.shape != J.shape[:2]:
            raise InputError(f"RowsTask takes J (B, m, n) and V (B, m), got {J.shape} and {V.shape}")
        w = np.ones(J.shape[1]) if weights is None else np.asarray(weights, dtype=float)
        self._params = RowsParams(np.ascontiguousarray(J * w[:, None]), np.ascontiguousarray(V * w))

    def params(self, batch: int) -> RowsParams:
        J, V = self._params
        if len(J) != batch:
            if len(J) != 1:
                raise InputError(f"RowsTask has rows for {len(J)} configurations, got {batch}")
            return RowsParams(np.ascontiguousarray(np.broadcast_to(J, (batch,) + J.shape[1:])),
                              np.ascontiguousarray(np.broadcast_to(V, (batch,) + V.shape[1:])))
        return self._params


def no_rows(batch: int, n: int) -> RowsParams:
    return RowsParams(np.zeros((batch, 0, n)), np.zeros((batch, 0)))
