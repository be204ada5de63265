"""One control tick towards joint goals that the motors can follow: the velocity (q_goal - q_now) / dt clipped into
the QP's joint box (URDF velocity bounds, the position limits one tick ahead, braking distance and an
acceleration window around the measured velocity). With position gain 0 and velocity gain 1 the motors track the
velocity, so an arm driven this way keeps its velocity bounds and stops at its limits instead of running past them.
The pose-IK controller drives its answers through it, a policy's joint targets go the same way (app.envs)."""

from __future__ import annotations

import numpy as np

from app.ik.limits import JointLimits
from app.ik.limits.joint_box import LIMIT_MARGIN, velocity_limited_batch
from app.kernels.dispatch import EntryPoints, kernel_array


class JointStep:
    """``step(q_now, v_now, q_goal, dt) -> (q_cmd, qdot)`` (n_envs, n_dofs) each, for a model's joint limits with
    an acceleration bound ``accel_max`` [rad/s^2] (None: velocity and position limits only); the box aims
    LIMIT_MARGIN inside the limits. ``brake`` < 1 (with accel_max) brakes before a limit as if only that fraction
    of the bound were available, a tick late: |qdot| <= sqrt(2 brake accel_max (d - |v_now| dt)) at a distance d
    from the margin, for motors that lag a velocity command (a joint driven straight at its limit)."""

    def __init__(self, model, accel_max: float | None, brake: float = 1.0):
        self._box = JointLimits(model, 1.0, accel_max, LIMIT_MARGIN)
        self._compiled = EntryPoints()
        self._brake = None if accel_max is None or brake >= 1.0 else brake * accel_max
        self._q_min, self._q_max = self._box.q_min, self._box.q_max

    def __call__(self, q_now: np.ndarray, v_now: np.ndarray, q_goal: np.ndarray, dt: float) -> tuple:
        args = (self._box.params(dt, True), kernel_array(q_now), kernel_array(v_now), kernel_array(q_goal), dt)
        q_cmd, qdot = self._compiled("step", velocity_limited_batch, args)
        if self._brake is None:
            return q_cmd, qdot
        lag = np.abs(v_now) * dt
        up = np.sqrt(2.0 * self._brake * np.maximum(self._q_max - q_now - lag, 0.0))
        down = -np.sqrt(2.0 * self._brake * np.maximum(q_now - self._q_min - lag, 0.0))
        qdot = np.clip(qdot, np.minimum(down, 0.0), np.maximum(up, 0.0))
        return q_now + qdot * dt, qdot
