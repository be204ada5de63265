"""One control tick towards joint goals that the motors can follow: the velocity (q_goal - q_now) / dt clipped into
the QP's joint box (URDF velocity bounds, the position limits one tick ahead, braking distance and an
acceleration window around the measured velocity). With position gain 0 and velocity gain 1 the motors track the
velocity, so an arm driven this way keeps its velocity bounds and stops at its limits instead of running past them.
The pose-IK controller drives its answers through it, a policy's joint targets go the same way (app.envs)."""

from __future__ import annotations

import numpy as np

from app.control.robot_protocol import LIMIT_MARGIN
from app.ik.limits import JointLimits
from app.ik.limits.joint_box import velocity_limited_batch
from app.kernels.dispatch import EntryPoints, kernel_array


class JointStep:
    """``step(q_now, v_now, q_goal, dt) -> (q_cmd, qdot)`` (n_envs, n_dofs) each, for a model's joint limits with
    an acceleration bound ``accel_max`` [rad/s^2] (None: velocity and position limits only); the box aims
    LIMIT_MARGIN inside the limits."""

    def __init__(self, model, accel_max: float | None):
        self._box = JointLimits(model, 1.0, accel_max, LIMIT_MARGIN)
        self._compiled = EntryPoints()

    def __call__(self, q_now: np.ndarray, v_now: np.ndarray, q_goal: np.ndarray, dt: float) -> tuple:
        args = (self._box.params(dt, True), kernel_array(q_now), kernel_array(v_now), kernel_array(q_goal), dt)
        return self._compiled("step", velocity_limited_batch, args)
