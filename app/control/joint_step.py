"""One control tick towards joint goals that the motors can follow: the velocity (q_goal - q_now) / dt clipped into
the QP's joint box (URDF velocity bounds, the position limits one tick ahead, braking distance and an
acceleration window around the measured velocity). With position gain 0 and velocity gain 1 the motors track the
velocity, so an arm driven this way keeps its velocity bounds and stops at its limits instead of running past them.
The pose-IK controller drives its answers through it, a policy's joint targets go the same way (app.envs).

With a jerk bound the step is shaped as well (:class:`JerkShaper`): the goal's own motion fed forward, the rest of
the way closed no faster than the arm can brake at half its acceleration bound, and the commanded acceleration
changed by at most ``jerk_max dt`` a tick, ramped down before the velocity it aims for is reached."""

from __future__ import annotations

import numpy as np

from app.control.jerk_window import JerkWindow, ramp_limit
from app.ik.limits import JointLimits
from app.ik.limits.joint_box import LIMIT_MARGIN, velocity_limited_batch
from app.kernels.dispatch import EntryPoints, kernel_array

PLAN_SHARE = 0.85  # of the acceleration and jerk bounds: what the shaper plans with (the rest: the motors' error,
# which the motion report sees in the commanded positions q_now + qdot dt)
BRAKE_SHARE = 0.5  # of the planned acceleration: what the shaper brakes with (the rest: the jerk ramp's lag)


class JointStep:
    """``step(q_now, v_now, q_goal, dt) -> (q_cmd, qdot)`` (n_envs, n_dofs) each, for a model's joint limits with
    an acceleration bound ``accel_max`` [rad/s^2] (None: velocity and position limits only); the box aims
    LIMIT_MARGIN inside the limits. ``brake`` < 1 (with accel_max) brakes before a limit as if only that fraction
    of the bound were available, a tick late: |qdot| <= sqrt(2 brake accel_max (d - |v_now| dt)) at a distance d
    from the margin, for motors that lag a velocity command (a joint driven straight at its limit).
    ``jerk_max`` [rad/s^3] (with accel_max; None: none) shapes the command (:class:`JerkShaper`); the step then
    keeps state between calls: :meth:`reset` after the arm was moved by other means."""

    def __init__(self, model, accel_max: float | None, brake: float = 1.0, jerk_max: float | None = None):
        self._box = JointLimits(model, 1.0, accel_max, LIMIT_MARGIN)
        self._compiled = EntryPoints()
        self._brake = None if accel_max is None or brake >= 1.0 else brake * accel_max
        self._q_min, self._q_max = self._box.q_min, self._box.q_max
        self._shaper = None if jerk_max is None or accel_max is None else \
            JerkShaper(self._box, accel_max, jerk_max)

    def reset(self, envs=None) -> None:
        """Forget the last tick's command of environments ``envs`` (None: all): a jerk-shaped step starts there
        again from the measured velocity."""
        if self._shaper is not None:
            self._shaper.reset(envs)

    def __call__(self, q_now: np.ndarray, v_now: np.ndarray, q_goal: np.ndarray, dt: float) -> tuple:
        if self._shaper is not None:
            qdot = self._shaper(q_now, v_now, q_goal, dt)
            q_cmd = q_now + qdot * dt
        else:
            args = (self._box.params(dt, True), kernel_array(q_now), kernel_array(v_now), kernel_array(q_goal), dt)
            q_cmd, qdot = self._compiled("step", velocity_limited_batch, args)
        if self._brake is None:
            return q_cmd, qdot
        lag = np.abs(v_now) * dt
        up = np.sqrt(2.0 * self._brake * np.maximum(self._q_max - q_now - lag, 0.0))
        down = -np.sqrt(2.0 * self._brake * np.maximum(q_now - self._q_min - lag, 0.0))
        qdot = np.clip(qdot, np.minimum(down, 0.0), np.maximum(up, 0.0))
        return q_now + qdot * dt, qdot


class JerkShaper:
    """The joint velocity to command towards goals that move, with a bounded jerk (all arrays (n_envs, n_dofs)):

    - the goal's own velocity (q_goal - last q_goal) / dt and acceleration are fed forward (within the bounds; a goal
      that moved faster than the velocity limit jumped, and is closed as a step);
    - the rest of the way e = q_goal - q_now - v_goal dt is closed at sign(e) min(|e| gain, sqrt(2 a_b |e|)),
      a_b = BRAKE_SHARE of the planned acceleration (PLAN_SHARE of each bound), within the velocity limits and no
      faster than the same law closes the distance to a position limit; the gain is a quarter of the jerk ramp's
      rate, so that the loop does not ring;
    - the commanded acceleration moves towards what reaches that velocity, a_goal + sign(ev) min(|ev| / dt,
      ramp_limit(|ev|)) (ev the velocity still to gain beyond the goal's own acceleration: ramped to 0 as it is
      reached), within the
      :class:`~app.control.jerk_window.JerkWindow`;
    - the result is clipped into the joint box at the measured state: the limits (and a motor that could not follow)
      win over the jerk bound; the window goes on from the acceleration the shaper chose, not the clip's.
    """

    def __init__(self, box: JointLimits, accel_max: float, jerk_max: float):
        self._box = box
        self._window = JerkWindow(box.v_max, PLAN_SHARE * accel_max, PLAN_SHARE * jerk_max)
        self._gain = jerk_max / (4.0 * accel_max)  # [1/s]: the position loop, slower than the jerk ramp
        self._goal: tuple | None = None  # the last tick's goal and its velocity, (n_envs, n_dofs) each

    def reset(self, envs=None) -> None:
        """Start environments ``envs`` (None: all) again from the measured velocity at the next call."""
        self._window.reset(envs)

    def __call__(self, q_now: np.ndarray, v_now: np.ndarray, q_goal: np.ndarray, dt: float) -> np.ndarray:
        q_now, v_now, q_goal = (np.asarray(a, dtype=float) for a in (q_now, v_now, q_goal))
        w, box = self._window, self._box
        fresh = w.start(v_now)
        if self._goal is None or self._goal[0].shape != q_goal.shape:
            self._goal = (q_goal.copy(), np.zeros_like(q_goal))
        goal_last, v_goal_last = (np.where(fresh[:, None], new, old) for old, new in zip(self._goal, (q_goal, 0.0)))
        v_goal = (q_goal - goal_last) / dt
        followable = np.abs(v_goal) <= box.v_max  # a faster goal jumped (a new target, another IK answer): a step
        v_goal = np.where(followable, v_goal, 0.0)
        a_goal = np.where(followable, np.clip((v_goal - v_goal_last) / dt, -w.accel, w.accel), 0.0)
        a_b = BRAKE_SHARE * w.accel
        v_aim = v_goal + _closing(q_goal - q_now - v_goal * dt, self._gain, a_b)
        v_aim = np.clip(v_aim, np.maximum(-_closing(np.maximum(q_now - box.q_min, 0.0), self._gain, a_b), -box.v_max),
                        np.minimum(_closing(np.maximum(box.q_max - q_now, 0.0), self._gain, a_b), box.v_max))
        ev = v_aim - (w.v_last + a_goal * dt)  # what the goal's own acceleration does not already bring
        a_aim = a_goal + np.sign(ev) * np.minimum(np.abs(ev) / dt, ramp_limit(np.abs(ev), w.jerk, dt))
        a = np.clip(a_aim, *w.bounds(dt))
        lo, hi = box.velocity_bounds(q_now, dt, v_now)
        qdot = np.clip(w.v_last + a * dt, lo, hi)
        w.commanded(qdot, a)
        self._goal = (q_goal.copy(), v_goal)
        return qdot


def _closing(e: np.ndarray, gain: float, a_brake: float) -> np.ndarray:
    """The velocity [rad/s] that closes a position error e [rad]: sign(e) min(gain |e|, sqrt(2 a_brake |e|))."""
    return np.sign(e) * np.minimum(np.abs(e) * gain, np.sqrt(2.0 * a_brake * np.abs(e)))
