"""The accelerations a jerk-bounded command may take next tick: within +-accel_max, at most jerk_max dt from the last
tick's, and ramped down before the velocity limit (no knock when the velocity reaches its bound). The pose-IK
controller's step shapes its command with them (app.control.joint_step)."""

from __future__ import annotations

import numpy as np

from app.errors import InputError


def ramp_limit(dv: np.ndarray, jerk: float, dt: float) -> np.ndarray:
    """The largest acceleration [rad/s^2] that ticks of ``dt`` [s] at ``jerk`` [rad/s^3] can ramp to 0 within a
    velocity change ``dv`` (>= 0) [rad/s]: a^2 / (2 jerk) + a dt = dv (the continuous ramp's a^2 / (2 jerk), and the
    tick at a itself)."""
    return jerk * (np.sqrt(dt * dt + 2.0 * dv / jerk) - dt)


class JerkWindow:
    """The last tick's commanded velocity and acceleration per environment and joint (n_envs, n_dofs), and the
    window of the next tick's acceleration: :meth:`bounds` -> (down, up) [rad/s^2] each (n_envs, n_dofs).

    Args:
        v_max: Velocity limits (n_dofs,) [rad/s]. accel_max [rad/s^2], jerk_max [rad/s^3]: the bounds (> 0).
    """

    def __init__(self, v_max: np.ndarray, accel_max: float, jerk_max: float):
        if not (accel_max > 0 and jerk_max > 0):
            raise InputError(f"accel_max and jerk_max must be > 0, got {accel_max}, {jerk_max}")
        self.v_max, self.accel, self.jerk = np.asarray(v_max, dtype=float), float(accel_max), float(jerk_max)
        self.v_last: np.ndarray | None = None
        self.a_last: np.ndarray | None = None
        self._fresh = np.zeros(0, dtype=bool)

    def reset(self, envs=None) -> None:
        """Environments ``envs`` (None: all) start again from their measured velocity at rest acceleration."""
        if envs is None or self.v_last is None:
            self.v_last = None
        else:
            self._fresh[np.asarray(envs, dtype=int)] = True

    def start(self, v_now: np.ndarray) -> np.ndarray:
        """Take the measured velocity v_now (n_envs, n_dofs) where there is no last command (the first tick, a
        reset); returns the environments that started again this tick (n_envs,) bool."""
        if self.v_last is None or self.v_last.shape != v_now.shape:
            self.v_last, self.a_last = np.array(v_now, dtype=float), np.zeros_like(v_now, dtype=float)
            self._fresh = np.zeros(len(v_now), dtype=bool)
            return np.ones(len(v_now), dtype=bool)
        fresh, self._fresh = self._fresh, np.zeros(len(v_now), dtype=bool)
        self.v_last[fresh], self.a_last[fresh] = v_now[fresh], 0.0
        return fresh

    def bounds(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(down, up): the next tick's commanded acceleration window [rad/s^2] (call :meth:`start` first)."""
        v, a, step = self.v_last, self.a_last, self.jerk * dt
        reach = ramp_limit(np.maximum(self.v_max - np.abs(v), 0.0), self.jerk, dt)
        up = np.minimum(np.minimum(a + step, self.accel), np.where(v > 0, reach, self.accel))
        down = np.maximum(np.maximum(a - step, -self.accel), np.where(v < 0, -reach, -self.accel))
        return down, np.maximum(up, down)

    def commanded(self, qdot: np.ndarray, accel: np.ndarray) -> None:
        """Record the velocity commanded this tick and the acceleration chosen within the window (n_envs, n_dofs)
        each: where a limit clipped the velocity, the next window goes on from the chosen acceleration (the clip's
        own, a stop at a limit, would hold the window beyond the bound)."""
        self.a_last = np.array(accel, dtype=float)
        self.v_last = np.array(qdot, dtype=float)
