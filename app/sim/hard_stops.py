"""Hard stops at the joints' position limits: after each physics step a joint that a contact pushed past a limit
is put back on it, its outward velocity gone (an inelastic stop), and the push counted.

PyBullet keeps a URDF's limits with a soft constraint that a contact can overpower: an arm driven into the table
at speed ended joints up to 42 mrad (a wrist) and 17 mm (a finger) past their limits, whatever the solver's
iterations, ERP or the limit's force. A real arm's mechanical stop does not give way, so neither does ours.
How often each environment's joints met a stop is kept (``hits``) for the reports: a hit is honest physics, not an
error, but a motion that leans on its stops says so.
"""

from __future__ import annotations

import numpy as np


class HardStops:
    """The stops of ``n_envs`` copies of one robot.

    Args:
        q_lower, q_upper: Position limits (n_dofs,) [rad or m]; +-inf where a joint has none.
        n_envs: Environments (bodies) kept.
    """

    def __init__(self, q_lower: np.ndarray, q_upper: np.ndarray, n_envs: int):
        self.q_lower, self.q_upper = np.asarray(q_lower, dtype=float), np.asarray(q_upper, dtype=float)
        self.hits = np.zeros(n_envs, dtype=np.int64)  # joint-steps spent pushed onto a stop, per environment

    def hold(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Put the joints of q, v (n_envs, n_dofs) back on their stops, in place; the environments changed."""
        below, above = q < self.q_lower, q > self.q_upper
        past = below | above
        if not past.any():
            return np.zeros(0, dtype=int)
        np.clip(q, self.q_lower, self.q_upper, out=q)
        v[below] = np.maximum(v[below], 0.0)
        v[above] = np.minimum(v[above], 0.0)
        self.hits += past.sum(axis=1)
        return np.flatnonzero(past.any(axis=1))
