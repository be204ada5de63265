"""The posture task: a preferred joint velocity towards a reference configuration, acting only in
the other tasks' nullspace (the builder projects it): qdot_posture = gain * (q_ref - q).

This is the one posture definition (diff IK's mid-range objective uses it too).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from app.errors import InputError
from app.kinematics.model import KinematicModel


class PostureParams(NamedTuple):
    """q_ref (n,) [rad or m], gain [1/s], weight (the cost's eps; 0: no posture term)."""

    q_ref: np.ndarray
    gain: float
    weight: float


@njit(cache=True)
def posture_velocity_one(pp, q, out):
    """out (n,) = gain * (q_ref - q) for one configuration q (n,)."""
    for i in range(q.shape[0]):
        out[i] = pp.gain * (pp.q_ref[i] - q[i])


def posture_velocity(q: np.ndarray, q_ref: np.ndarray, gain: float) -> np.ndarray:
    """gain * (q_ref - q) for q (..., n) -> (..., n), by :func:`posture_velocity_one`."""
    q2 = np.ascontiguousarray(np.asarray(q, dtype=float).reshape(-1, np.shape(q)[-1]))
    pp, out = PostureParams(np.ascontiguousarray(q_ref, dtype=float), float(gain), 1.0), np.empty_like(q2)
    for b in range(len(q2)):
        posture_velocity_one(pp, q2[b], out[b])
    return out.reshape(np.shape(q))


class PostureTask:
    """Prefer ``q_ref`` (default the mid-point of the limits) with gain [1/s] and weight eps.

    Args:
        model: The robot (for the default reference); None with ``q_ref`` given. gain: [1/s].
        weight: eps of the cost. q_ref: Reference configuration. Shape (n_dofs,).
    """

    slot = "posture"

    def __init__(self, model: KinematicModel | None = None, gain: float = 1.0, weight: float = 1e-3,
                 q_ref: np.ndarray | None = None):
        if model is None and q_ref is None:
            raise InputError("PostureTask needs a model or q_ref")
        ref = model.mid_config() if q_ref is None else (
            np.asarray(q_ref, dtype=float) if model is None else model.check_q(q_ref, "q_ref"))
        self._params = PostureParams(np.ascontiguousarray(ref, dtype=float), float(gain), float(weight))

    def __repr__(self) -> str:
        return f"PostureTask(gain={self._params.gain}, weight={self._params.weight})"

    def params(self, batch: int) -> PostureParams:
        del batch  # the same for every configuration
        return self._params

    def compute_error(self, q: np.ndarray) -> np.ndarray:
        """q_ref - q. Shape (B, n_dofs)."""
        return self._params.q_ref - np.asarray(q, dtype=float)

    def compute_jacobian(self, q: np.ndarray) -> np.ndarray:
        """d(q)/dq: the identity per configuration. Shape (B, n_dofs, n_dofs)."""
        q = np.asarray(q, dtype=float)
        return np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-1] + (q.shape[-1], q.shape[-1])).copy()
