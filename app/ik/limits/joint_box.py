"""Joint limits as a velocity box: a one-tick lookahead on the position limits, the velocity
bounds, braking distance and an acceleration window around the measured velocity.

(q_min - q)/h <= qdot <= (q_max - q)/h and |qdot| <= velocity_scale * v_max, one box row per DOF.
A DOF already past a limit (physics slack) is asked to come back no faster than its velocity
bound allows: the box never becomes empty. With ``accel_max``, qdot stays within
qdot_measured +- accel_max h, clamped into that box (position and velocity limits win over the
acceleration window), and |qdot| <= sqrt(2 accel_max d) at a distance d from a limit, so that
the joint can still brake before it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from app.ik.qp import INF, Inequalities
from app.kinematics.model import KinematicModel

LIMIT_MARGIN = 1e-4  # [rad] or [m]: commands aim this far inside the joint limits (the motors' stopping error)


class JointBoxParams(NamedTuple):
    """dt [s]; v_max, q_min, q_max, accel (n,); use_accel; use_qdot (bound by the measured velocity)."""

    active: bool
    dt: float
    v_max: np.ndarray
    q_min: np.ndarray
    q_max: np.ndarray
    accel: np.ndarray
    use_accel: bool
    use_qdot: bool


@njit(cache=True)
def joint_box_one(jb, q, qdot, lo, hi):
    """Box rows for one configuration q, qdot (n,) into lo, hi (n,), intersected with what they hold."""
    dt, v_max, q_min, q_max, accel_max = jb.dt, jb.v_max, jb.q_min, jb.q_max, jb.accel
    for i in range(q.shape[0]):
        l = max(-v_max[i], (q_min[i] - q[i]) / dt)
        h = min(v_max[i], (q_max[i] - q[i]) / dt)
        if jb.use_accel:  # no faster than what can still brake before the limit
            l = max(l, -np.sqrt(2.0 * accel_max[i] * max(q[i] - q_min[i], 0.0)))
            h = min(h, np.sqrt(2.0 * accel_max[i] * max(q_max[i] - q[i], 0.0)))
        l, h = min(l, v_max[i]), max(h, -v_max[i])  # past a limit: come back, no faster than v_max
        l = min(l, h)
        if jb.use_accel and jb.use_qdot:
            step = accel_max[i] * dt
            l, h = min(max(qdot[i] - step, l), h), min(max(qdot[i] + step, l), h)
        lo[i], hi[i] = max(max(l, -INF), lo[i]), min(min(h, INF), hi[i])


@njit(cache=True)
def joint_box_batch(jb, q, qdot):
    """:func:`joint_box_one` for q, qdot (B, n) -> (lo, hi) (B, n)."""
    lo, hi = np.full(q.shape, -INF), np.full(q.shape, INF)
    for b in range(q.shape[0]):
        joint_box_one(jb, q[b], qdot[b], lo[b], hi[b])
    return lo, hi


@njit(cache=True)
def velocity_limited_batch(jb, q, qdot, q_goal, dt):
    """The step from q towards q_goal (B, n) that the box at q, qdot (B, n) allows: the velocity
    (q_goal - q) / dt clipped into the box -> (q + velocity dt, velocity), each (B, n)."""
    lo, hi = joint_box_batch(jb, q, qdot)
    q_cmd, v_cmd = np.empty(q.shape), np.empty(q.shape)
    for b in range(q.shape[0]):
        for i in range(q.shape[1]):
            v_cmd[b, i] = min(max((q_goal[b, i] - q[b, i]) / dt, lo[b, i]), hi[b, i])
            q_cmd[b, i] = q[b, i] + v_cmd[b, i] * dt
    return q_cmd, v_cmd


def inactive_joint_box(n: int) -> JointBoxParams:
    z = np.zeros(n)
    return JointBoxParams(False, 1.0, z, z, z, z, False, False)


class JointLimits:
    """The joint box of a model (see the module docstring).

    Args:
        model: The robot.
        velocity_scale: Fraction of the URDF velocity limits to allow.
        accel_max: Joint acceleration bound [rad/s^2 or m/s^2], scalar or (n_dofs,); None for none.
        margin: The box aims this far inside the position limits [rad or m]: what a simulated motor
            overshoots when it stops at a limit (the controllers use 1e-4).
        frozen_dofs: DOFs held still (their velocity bound 0), e.g. a gripper's, which the arm does not move.
    """

    slot = "joint_box"

    def __init__(self, model: KinematicModel, velocity_scale: float = 1.0, accel_max: float | None = None,
                 margin: float = 0.0, frozen_dofs=()):
        self.v_max = np.minimum(model.v_max * velocity_scale, INF)
        self.v_max[np.asarray(frozen_dofs, dtype=int)] = 0.0
        self.margin = float(margin)
        self.q_min, self.q_max = model.q_lower + self.margin, model.q_upper - self.margin
        self.accel_max = accel_max
        self._accel = np.broadcast_to(np.inf if accel_max is None else np.asarray(accel_max, dtype=float),
                                      self.v_max.shape).copy()
        self._cache: dict = {}

    def __repr__(self) -> str:
        return f"JointLimits(v_max={np.round(self.v_max, 3).tolist()}, accel_max={self.accel_max})"

    def params(self, dt: float, use_qdot: bool = True) -> JointBoxParams:
        """The box as the compiled builder takes it, for ticks of ``dt`` seconds."""
        key = (float(dt), bool(use_qdot))
        if key not in self._cache:
            self._cache[key] = JointBoxParams(True, float(dt), self.v_max, self.q_min, self.q_max, self._accel,
                                              self.accel_max is not None, bool(use_qdot))
        return self._cache[key]

    def compute_qp_inequalities(self, q: np.ndarray, dt: float, qdot: np.ndarray | None = None) -> Inequalities:
        """Box rows: q ([B,] n_dofs), dt [s], qdot ([B,] n_dofs) measured velocity; lo, hi ([B,] n_dofs)."""
        q = np.asarray(q, dtype=float)
        lo, hi = self.velocity_bounds(q, dt, qdot)
        return Inequalities(np.eye(q.shape[-1]), lo, hi)

    def velocity_bounds(self, q: np.ndarray, dt: float, qdot: np.ndarray | None = None) -> tuple:
        """The box alone, (lo, hi) on the joint velocity [rad/s] ([B,] n_dofs each), for a loop that needs no rows:
        q ([B,] n_dofs), dt [s], qdot ([B,] n_dofs) measured velocity (None: the acceleration window is not used)."""
        q = np.asarray(q, dtype=float)
        q2 = np.ascontiguousarray(q.reshape(-1, q.shape[-1]))
        v2 = q2 if qdot is None else np.ascontiguousarray(np.asarray(qdot, dtype=float).reshape(q2.shape))  # q2: unused
        lo, hi = joint_box_batch(self.params(dt, qdot is not None), q2, v2)
        return lo.reshape(q.shape), hi.reshape(q.shape)
