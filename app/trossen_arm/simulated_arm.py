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
NUMERIC_SLACK = 1e-6  # of velocity_max: a velocity command clipped at the limit is met, not exceeded
GRIPPER_STOP = 0.002  # [m]: the gripper motor slows to a stop over this much before the end of its travel
SAFE_CLOSE = (-0.01, 5.0)  # [m/s], [N]: the gripper after an error ("closes with a safe force")


# plain ints of the enums, for the per-step code (an IntEnum member lookup costs a microsecond)
_IDLE, _POSITION, _EXTERNAL = int(Mode.idle), int(Mode.position), int(Mode.external_effort)
_BRAKE_MOTOR, _VELOCITY_MOTOR = int(MotorKind.BRAKE), int(MotorKind.VELOCITY)
_KIND_OF_MODE = np.array([MotorKind.BRAKE, MotorKind.POSITION, MotorKind.VELOCITY, MotorKind.TORQUE, MotorKind.TORQUE],
                         dtype=int)  # indexed by Mode


class Source(Protocol):
    """What drives some joints: their desired state at time t [s] given the measured robot DOFs."""

    def sample(self, t: float, q_dofs: np.ndarray) -> np.ndarray:
        """(3, n): value, first and second derivative of each driven joint."""


class Measured:
    """What the arm measured after a step (driver joints, 7 each): q, v, a, effort, compensation (gravity's),
    and the robot DOFs' q_dofs, v_dofs, a_dofs."""

    def __init__(self, n: int = N_JOINTS):
        self.q, self.v, self.a = np.zeros(n), np.zeros(n), np.zeros(n)
        self.effort, self.compensation = np.zeros(n), np.zeros(n)
        self.q_dofs = self.v_dofs = self.a_dofs = np.zeros(0)


class SimulatedArm:
    """The controller of one simulated arm.

    Args:
        motors: Its body's app.sim JointMotors. joints: driver joints <-> DOFs. limits: seven JointLimits.
        dt: The physics step [s].
    """

    def __init__(self, motors: JointMotors, joints: JointMap, limits: list[JointLimit], dt: float):
        self.motors, self.joints, self.dt = motors, joints, dt
        self.limits = limits
        self._gravity_known = False
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
        if mode == Mode.external_effort:
            self.measured.compensation = self.compensation_efforts()

    def drive(self, idx: np.ndarray, source: Source) -> None:
        """From now on ``source`` gives the desired state of joints ``idx``."""
        idx = np.asarray(idx, dtype=int)
        self._release(idx)
        self._sources.append((source, idx))

    def _release(self, idx: np.ndarray) -> None:
        """Joints ``idx`` leave the sources that drove them (a source left with none is dropped)."""
        kept, taken = [], set(idx.tolist())
        for source, joints in self._sources:
            rest = np.array([j for j in joints.tolist() if j not in taken], dtype=int)
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
    def refresh(self, t: float) -> None:
        """The desired state of every driven joint at t [s] (a new command starts from it)."""
        for source, idx in self._sources:
            self.desired[:, idx] = source.sample(t, self.measured.q_dofs)

    def before_step(self, t: float) -> None:
        """Sample the sources at t [s] and set the motors for the coming step."""
        self.refresh(t)
        kinds, q, v, tau, force = self._motor_commands()
        m = self.joints
        self.motors.apply(m.dofs_of(kinds).astype(int), m.dofs_of(q), m.dofs_of(v), m.dofs_of(tau),
                          m.dofs_of(force))

    def _motor_commands(self) -> tuple[np.ndarray, ...]:
        """Per driver joint: motor kind, position, velocity, torque and force cap, from the modes and desires."""
        lim, d, modes = self._table, self.desired, np.array(self.modes, dtype=int)
        lo, hi, vmax, force = lim[:, 0], lim[:, 1], lim[:, 3], lim[:, 5].copy()
        kinds = _KIND_OF_MODE[modes]
        q = np.clip(d[0], lo, hi)
        v = np.where(modes == _POSITION, np.clip(d[1], -vmax, vmax), np.clip(d[0], -vmax, vmax))
        outward = ((d[0] >= hi) & (v > 0)) | ((d[0] <= lo) & (v < 0))  # a clipped goal's ramp still heading out:
        v = np.where((modes == _POSITION) & outward, 0.0, v)  # its feed-forward would carry the joint past the limit
        tau = d[0] + np.where(modes == _EXTERNAL, self.measured.compensation, 0.0)
        if modes[GRIPPER] >= _EXTERNAL:
            push = d[0, GRIPPER]  # a force-limited motor at a bounded speed (its gear, not a free carriage),
            room = (hi[GRIPPER] - self.measured.q[GRIPPER]) if push > 0 else (self.measured.q[GRIPPER] - lo[GRIPPER])
            slow = np.clip(room / GRIPPER_STOP, 0.0, 1.0)  # that slows to a stop at the end of its travel
            kinds[GRIPPER], v[GRIPPER] = _VELOCITY_MOTOR, np.sign(push) * GRIPPER_SPEED * vmax[GRIPPER] * slow
            force[GRIPPER] = abs(push)
        if self.error_state:
            kinds[:] = _BRAKE_MOTOR
            kinds[GRIPPER], v[GRIPPER], force[GRIPPER] = _VELOCITY_MOTOR, SAFE_CLOSE[0], SAFE_CLOSE[1]
        return kinds, q, v, tau, force

    def after_step(self) -> None:
        """Read the motors and check the limits."""
        self.read()
        self.output_id += 1
        if not self.error_state:
            self._check_limits()

    def read(self) -> None:
        """Measure: positions, velocities, accelerations (difference over a step), efforts, compensation."""
        q, v, tau = self.motors.read()
        m, meas = self.joints, self.measured
        tau = np.where(self.motors.torque != 0.0, self.motors.torque, tau)
        meas.a_dofs = (v - meas.v_dofs) / self.dt if meas.v_dofs.size else np.zeros_like(v)
        meas.q_dofs, meas.v_dofs, meas.a = q, v, m.driver_of(meas.a_dofs)
        meas.q, meas.v, meas.effort = m.driver_of(q), m.driver_of(v), m.driver_of(tau)
        if _EXTERNAL in self.modes or not self._gravity_known:  # what the external_effort mode adds
            gravity = m.driver_of(self.motors.gravity_torques(q))
            gravity[GRIPPER] = 0.0
            meas.compensation, self._gravity_known = gravity, _EXTERNAL in self.modes

    def compensation_efforts(self) -> np.ndarray:
        """Gravity's torques at the measured joints [N m] (7,; zero for the gripper): the compensation efforts."""
        g = self.joints.driver_of(self.motors.gravity_torques(self.measured.q_dofs))
        g[GRIPPER] = 0.0
        return g

    def external_efforts(self) -> np.ndarray:
        """What the environment applies at each driver joint [N m | N] (7,): the efforts less what the arm's own
        motion takes (inverse dynamics at the measured q, v, a: gravity, Coriolis, inertia); zero in free
        space, the contacts' share otherwise. (The real driver subtracts its compensation model instead.)"""
        meas = self.measured
        if not meas.v_dofs.size:
            return np.zeros(N_JOINTS)
        own = self.joints.driver_of(self.motors.inverse_dynamics(meas.q_dofs, meas.v_dofs, meas.a_dofs))
        return meas.effort - own

    @property
    def limits(self) -> list[JointLimit]:
        """The seven JointLimits (set whole: ``arm.limits = [...]``)."""
        return self._limits

    @limits.setter
    def limits(self, limits: list[JointLimit]) -> None:
        self._limits = list(limits)
        self._table = np.array([[lim.position_min, lim.position_max, lim.position_tolerance, lim.velocity_max,
                                 lim.velocity_tolerance, lim.effort_max, lim.effort_tolerance] for lim in limits])

    def _check_limits(self) -> None:
        meas, t = self.measured, self._table
        active = np.array(self.modes, dtype=int) != _IDLE
        over = ((meas.q > t[:, 1] + t[:, 2]) | (meas.q < t[:, 0] - t[:, 2])
                | (np.abs(meas.v) > t[:, 3] * (1 + NUMERIC_SLACK) + t[:, 4]) | (np.abs(meas.effort) > t[:, 5] + t[:, 6]))
        bad = np.flatnonzero(over & active)
        if bad.size:
            j = int(bad[0])
            self.fault(ErrorState.joint_limit_exceeded,
                       f"joint {j} {_beyond(self._limits[j], meas.q[j], meas.v[j], meas.effort[j])}")


def _beyond(lim: JointLimit, q: float, v: float, effort: float) -> str:
    """What of (q, v, effort) is past the limit padded by its tolerance ('' where nothing is)."""
    if q > lim.position_max + lim.position_tolerance or q < lim.position_min - lim.position_tolerance:
        return (f"position {q:.6g} outside [{lim.position_min:.6g}, {lim.position_max:.6g}] padded by "
                f"{lim.position_tolerance:.6g}")
    if abs(v) > lim.velocity_max * (1 + NUMERIC_SLACK) + lim.velocity_tolerance:
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
