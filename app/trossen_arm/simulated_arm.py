"""One simulated arm controller: the joints' modes, the commands being followed, the limit checks, the
error state, and what it measures, stepped with the world's physics.

It behaves as the arm controller Trossen documents (docs/getting_started/configuration.rst, Joint Limits):
a desired position is clipped to [position_min, position_max] and a desired velocity to +-velocity_max
before the motors get them; after each step the measured position, velocity and effort are checked
against the limits padded by their tolerances (not in idle mode), and any beyond puts the controller in
``ErrorState.joint_limit_exceeded``: from then on the arm joints brake, the gripper closes gently, and the
driver raises until ``configure(..., clear_error=True)``. Switching a joint into velocity or effort mode
starts it from a zero command, into position mode from where it is.

Each joint is driven by the last command that named it (a ``Source``: a Ramp, a Cartesian path or a twist),
sampled at every physics step's start time.
"""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np

from app.sim.joint_motors import JointMotors, MotorKind
from app.trossen_arm.enums import ErrorState, Mode
from app.trossen_arm.joint_space import N_JOINTS, JointMap
from app.trossen_arm.properties import JointLimit

log = logging.getLogger(__name__)

GRIPPER = N_JOINTS - 1
GRIPPER_SPEED = 0.8  # of velocity_max: how fast the force-limited gripper motor runs in an effort mode
GRIPPER_STOP = 0.002  # [m]: the gripper motor slows to a stop over this much before the end of its travel
SAFE_CLOSE = (-0.01, 5.0)  # [m/s], [N]: the gripper after an error ("closes with a safe force")


class Source(Protocol):
    """What drives some joints: their desired state at time t [s] given the measured robot DOFs."""

    def sample(self, t: float, q_dofs: np.ndarray) -> np.ndarray:
        """(3, n): value, first and second derivative of each driven joint."""


class Measured:
    """What the arm measured after a step (driver joints, 7 each): q, v, a, effort, compensation."""

    def __init__(self, n: int = N_JOINTS):
        self.q, self.v, self.a = np.zeros(n), np.zeros(n), np.zeros(n)
        self.effort, self.compensation = np.zeros(n), np.zeros(n)
        self.q_dofs = np.zeros(0)


class SimulatedArm:
    """The controller of one simulated arm.

    Args:
        motors: Its body's app.sim JointMotors. joints: driver joints <-> DOFs. limits: seven JointLimits.
        dt: The physics step [s].
    """

    def __init__(self, motors: JointMotors, joints: JointMap, limits: list[JointLimit], dt: float):
        self.motors, self.joints, self.dt = motors, joints, dt
        self.limits = limits
        self.modes = [Mode.idle] * N_JOINTS
        self.desired = np.zeros((3, N_JOINTS))
        self._sources: list[tuple[Source, np.ndarray]] = []
        self.error_state, self.error_log = ErrorState.none, ""
        self.measured = Measured()
        self.output_id = 0
        self.read()

    # ------------------------------------------------------------------ commands
    def set_modes(self, idx: np.ndarray, mode: Mode) -> None:
        """Joints ``idx`` into ``mode``: position holds where they are, the others start from zero."""
        idx = np.asarray(idx, dtype=int)
        self._release(idx)
        for j in idx:
            self.modes[j] = Mode(mode)
        self.desired[:, idx] = 0.0
        if mode == Mode.position:
            self.desired[0, idx] = self.measured.q[idx]

    def drive(self, idx: np.ndarray, source: Source) -> None:
        """From now on ``source`` gives the desired state of joints ``idx``."""
        idx = np.asarray(idx, dtype=int)
        self._release(idx)
        self._sources.append((source, idx))

    def _release(self, idx: np.ndarray) -> None:
        """Joints ``idx`` leave the sources that drove them (a source left with none is dropped)."""
        kept = []
        for source, joints in self._sources:
            rest = np.setdiff1d(joints, idx)
            if rest.size == joints.size:
                kept.append((source, joints))
            elif rest.size:
                kept.append((_Columns(source, joints, rest), rest))
        self._sources = kept

    def fault(self, state: ErrorState, reason: str) -> None:
        """Enter an error state (kept until cleared): the joints brake."""
        if self.error_state == ErrorState.none:
            log.error("simulated arm controller error (%s): %s", state.name, reason)
        self.error_state, self.error_log = state, reason
        self._sources = []

    def clear_error(self) -> None:
        """Back to no error, every joint idle at rest."""
        self.error_state, self.error_log = ErrorState.none, ""
        self.set_modes(np.arange(N_JOINTS), Mode.idle)

    # ------------------------------------------------------------------ stepping
    def before_step(self, t: float) -> None:
        """Sample the sources at t [s] and set the motors for the coming step."""
        for source, idx in self._sources:
            self.desired[:, idx] = source.sample(t, self.measured.q_dofs)
        kinds, q, v, tau, force = self._motor_commands()
        m = self.joints
        self.motors.apply(m.dofs_of(kinds).astype(int), m.dofs_of(q), m.dofs_of(v), m.dofs_of(tau),
                          m.dofs_of(force))

    def _motor_commands(self) -> tuple[np.ndarray, ...]:
        """Per driver joint: motor kind, position, velocity, torque and force cap, from the modes and desires."""
        n = N_JOINTS
        kinds, q, v, tau = np.full(n, MotorKind.BRAKE), np.zeros(n), np.zeros(n), np.zeros(n)
        force = np.array([lim.effort_max for lim in self.limits], dtype=float)
        lo, hi, vmax = self._limit_rows()
        d = self.desired
        for j, mode in enumerate(self.modes):
            if self.error_state != ErrorState.none or mode == Mode.idle:
                continue
            if mode == Mode.position:
                kinds[j], q[j], v[j] = MotorKind.POSITION, np.clip(d[0, j], lo[j], hi[j]), np.clip(d[1, j], -vmax[j],
                                                                                                  vmax[j])
            elif mode == Mode.velocity:
                kinds[j], v[j] = MotorKind.VELOCITY, np.clip(d[0, j], -vmax[j], vmax[j])
            else:
                extra = self.measured.compensation[j] if mode == Mode.external_effort else 0.0
                kinds[j], tau[j] = MotorKind.TORQUE, d[0, j] + extra
        if self.modes[GRIPPER] in (Mode.effort, Mode.external_effort) and self.error_state == ErrorState.none:
            push = d[0, GRIPPER]  # a force-limited motor at a bounded speed (its gear, not a free carriage),
            room = (hi[GRIPPER] - self.measured.q[GRIPPER]) if push > 0 else (self.measured.q[GRIPPER] - lo[GRIPPER])
            slow = np.clip(room / GRIPPER_STOP, 0.0, 1.0)  # that slows to a stop at the end of its travel
            kinds[GRIPPER], v[GRIPPER] = MotorKind.VELOCITY, np.sign(push) * GRIPPER_SPEED * vmax[GRIPPER] * slow
            force[GRIPPER] = abs(push)
        if self.error_state != ErrorState.none:
            kinds[GRIPPER], v[GRIPPER], force[GRIPPER] = MotorKind.VELOCITY, SAFE_CLOSE[0], SAFE_CLOSE[1]
        return kinds, q, v, tau, force

    def after_step(self) -> None:
        """Read the motors and check the limits."""
        self.read()
        self.output_id += 1
        if self.error_state == ErrorState.none:
            self._check_limits()

    def read(self) -> None:
        """Measure: positions, velocities, accelerations (difference over a step), efforts, compensation."""
        q, v, tau = self.motors.read()
        m, meas = self.joints, self.measured
        tau = np.where(np.isin(np.arange(len(tau)), m.dof), tau, 0.0)
        torque_dofs = self.motors.torque != 0.0
        tau = np.where(torque_dofs, self.motors.torque, tau)
        v7 = m.driver_of(v)
        meas.a = (v7 - meas.v) / self.dt if meas.q_dofs.size else np.zeros(N_JOINTS)
        meas.q_dofs, meas.q, meas.v, meas.effort = q, m.driver_of(q), v7, m.driver_of(tau)
        gravity = m.driver_of(self.motors.gravity_torques(q))
        gravity[GRIPPER] = 0.0
        meas.compensation = gravity

    def _limit_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo = np.array([lim.position_min for lim in self.limits])
        hi = np.array([lim.position_max for lim in self.limits])
        return lo, hi, np.array([lim.velocity_max for lim in self.limits])

    def _check_limits(self) -> None:
        meas = self.measured
        for j, (lim, mode) in enumerate(zip(self.limits, self.modes)):
            if mode == Mode.idle:
                continue
            beyond = _beyond(lim, meas.q[j], meas.v[j], meas.effort[j])
            if beyond:
                self.fault(ErrorState.joint_limit_exceeded, f"joint {j} {beyond}")
                return


def _beyond(lim: JointLimit, q: float, v: float, effort: float) -> str:
    """What of (q, v, effort) is past the limit padded by its tolerance ('' where nothing is)."""
    if q > lim.position_max + lim.position_tolerance or q < lim.position_min - lim.position_tolerance:
        return (f"position {q:.6g} outside [{lim.position_min:.6g}, {lim.position_max:.6g}] padded by "
                f"{lim.position_tolerance:.6g}")
    if abs(v) > lim.velocity_max + lim.velocity_tolerance:
        return f"velocity {v:.6g} beyond {lim.velocity_max:.6g} + {lim.velocity_tolerance:.6g}"
    if abs(effort) > lim.effort_max + lim.effort_tolerance:
        return f"effort {effort:.6g} beyond {lim.effort_max:.6g} + {lim.effort_tolerance:.6g}"
    return ""


class _Columns:
    """The columns of a source's joints still driven by it (the others were given a new command)."""

    def __init__(self, source: Source, joints: np.ndarray, kept: np.ndarray):
        self.source, self.cols = source, np.searchsorted(joints, kept) if _sorted(joints) else \
            np.array([int(np.flatnonzero(joints == k)[0]) for k in kept])

    def sample(self, t: float, q_dofs: np.ndarray) -> np.ndarray:
        return self.source.sample(t, q_dofs)[:, self.cols]


def _sorted(a: np.ndarray) -> bool:
    return bool(np.all(np.diff(a) > 0))
