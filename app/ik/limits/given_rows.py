"""Given inequality rows lo <= G qdot <= hi per configuration (a limit computed outside the
compiled code, or for tests of the QP), after the collision rows in the QP."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.errors import InputError
from app.ik.qp import INF, Inequalities


class RowsLimitParams(NamedTuple):
    """G (B, K, n), lo, hi (B, K), count (B,) rows in use."""

    G: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    count: np.ndarray


def no_limit_rows(batch: int, n: int) -> RowsLimitParams:
    return RowsLimitParams(np.zeros((batch, 0, n)), np.zeros((batch, 0)), np.zeros((batch, 0)),
                           np.zeros(batch, dtype=np.int64))


class RowsLimit:
    """Rows lo <= G qdot <= hi: G (k, n), lo, hi (k,) for every configuration, or one set per
    configuration ``env`` (k,) says which (rows grouped by configuration)."""

    slot = "rows_limit"

    def __init__(self, G: object, lo: object, hi: object, env: object | None = None):
        G, lo, hi = np.atleast_2d(np.asarray(G, dtype=float)), np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        if lo.shape != (len(G),) or hi.shape != (len(G),):
            raise InputError(f"RowsLimit needs G (k, n), lo and hi (k,), got {G.shape}, {lo.shape}, {hi.shape}")
        self.rows = Inequalities(G, np.clip(lo, -INF, INF), np.clip(hi, -INF, INF))
        self.env = None if env is None else np.asarray(env, dtype=np.int64)

    def params(self, batch: int) -> RowsLimitParams:
        """Each configuration's rows in its own slots, padded to the most any configuration has."""
        k, n = self.rows.G.shape
        env = np.zeros(k, dtype=np.int64) if self.env is None else self.env
        if self.env is None and batch > 1:  # the same rows for every configuration
            env, src = np.repeat(np.arange(batch), k), np.tile(np.arange(k), batch)
        else:
            src = np.arange(k)
        count = np.bincount(env, minlength=batch)
        slot = np.arange(len(env)) - np.searchsorted(env, env)
        K = int(count.max(initial=0))
        G, lo, hi = np.zeros((batch, K, n)), np.zeros((batch, K)), np.zeros((batch, K))
        G[env, slot], lo[env, slot], hi[env, slot] = self.rows.G[src], self.rows.lo[src], self.rows.hi[src]
        return RowsLimitParams(G, lo, hi, count.astype(np.int64))

    def compute_qp_inequalities(self) -> Inequalities:
        return self.rows
