"""Track an end-effector trajectory sampled at the control rate with a controller, tick by tick: the measured
joints at every tick, and every stretch where an arm fell behind with its cause (app.control.stall_causes).

The loop talks to a :class:`~app.control.robot_protocol.ControlledRobot` and a controller (``ik`` or ``qp``) only; what
advances the robot between ticks (an ideal integrator, or physics steps) is the caller's ``advance``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from app.control.ik_controller import PoseIKController
from app.control.motions import Targets
from app.control.qp_controller import QPController
from app.control.stall_causes import StallDiagnosis
from app.control.stall_stretches import Stretch, StretchLog
from app.control.trajectory_targets import TickTargets
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import quat_to_matrix
from app.validation import as_rotation_matrices, as_vectors, check_finite

GATE = 0.5  # arms are diagnosed when the controller's own error passes this fraction of a tolerance


class TrackResult(NamedTuple):
    """q (n_ticks, n_dofs): the measured joints at every tick; stretches: in order of their start; wall_s, cpu_s:
    the loop's wall-clock and CPU time [s] (CPU: what it costs on an idle machine), the targets' conversion before it
    and the diagnosis after it included; diagnosed_ticks: ticks on which the causes were looked for."""

    q: np.ndarray
    stretches: list[Stretch]
    wall_s: float
    cpu_s: float
    diagnosed_ticks: int


class _BaseTargets(NamedTuple):
    pos: np.ndarray  # (n, k, 3)
    R: np.ndarray  # (n, k, 3, 3)
    twist_in: np.ndarray  # (n, k, 6)


def _blocks_to_base(base: BaseFrame, x: np.ndarray, origin: bool = True) -> np.ndarray:
    """Environment-frame vectors x (..., r, 3) in the base frame (points: less the origin), one matrix product per
    block of r rows: each block rounds as the controllers' own conversion of one tick's r rows does (numpy's
    product of a taller block rounds differently), so a trajectory converted at once drives them exactly as tick
    by tick."""
    return np.matmul(x - base.p if origin else x, base.R)


def _to_base(base: BaseFrame, targets: TickTargets) -> _BaseTargets:
    n, k = targets.pos.shape[:2]
    pos = (targets.pos.reshape(-1, 3) - base.p) @ base.R
    R = np.matmul(base.R.T, quat_to_matrix(targets.quat.reshape(-1, 4)))
    twist = base.twists_to_base(targets.twist_in.reshape(-1, 6))
    return _BaseTargets(pos.reshape(n, k, 3), R.reshape(n, k, 3, 3), twist.reshape(n, k, 6))


def _qp_driver(controller: QPController, targets: TickTargets, base: BaseFrame) -> Callable[[int], None]:
    """drive(k) for the QP: every tick's targets checked and in the base frame before the loop, as
    QPController.step converts one tick's (the full twist: its ``track`` feeds forward the linear velocity
    only), one target per frame task."""
    n, T = targets.pos.shape[:2]
    c = np.ascontiguousarray
    pos = as_vectors(targets.pos, "target_pos", 3).reshape(n, T, 1, 3)  # a (1, 3) block per task and tick
    twist = as_vectors(np.concatenate([targets.vel, targets.omega], axis=2), "target_twist", 6).reshape(n, T, 2, 1, 3)
    pos_b, twist_b = c(_blocks_to_base(base, pos)), c(_blocks_to_base(base, twist, False).reshape(n, T, 1, 6))
    rot_b = None
    if any(any(task.rot_mask) for task in controller.tasks):
        rot_b = c(np.matmul(base.R.T, as_rotation_matrices(targets.quat, "target_quat").reshape(n, T, 1, 3, 3)))
    pos_env = c(targets.pos[:, :1])  # (n, 1, 3): the first task's, one environment
    ts = targets.t.tolist()
    if T == 1:
        rows = [(pos_b[k, 0], None if rot_b is None else rot_b[k, 0], twist_b[k, 0]) for k in range(n)]
    else:
        rows = [[(pos_b[k, j], None if rot_b is None else rot_b[k, j], twist_b[k, j]) for j in range(T)]
                for k in range(n)]
    return lambda k: controller.step_base(ts[k], rows[k], pos_env[k])


def _ik_driver(controller: PoseIKController, targets: TickTargets, base: BaseFrame) -> Callable[[int], None]:
    """drive(k) for the pose IK: every tick's targets checked and in the base frame before the loop, as
    PoseIKController.track converts one tick's."""
    n, T = targets.pos.shape[:2]
    c = np.ascontiguousarray
    aim = check_finite(c(_blocks_to_base(base, controller.aim(targets.pos, targets.vel)).reshape(n, 1, T, 3)),
                       "target pos")  # a (T, 3) block per tick
    _, quat = base.targets_to_base(None, targets.quat.reshape(-1, 4))
    rot = check_finite(c(quat_to_matrix(quat).reshape(n, 1, T, 3, 3)), "target quat")
    now = c(_blocks_to_base(base, targets.pos).reshape(n, 1, T, 3))
    pos_env = c(targets.pos[:, :1])
    ts = targets.t.tolist()
    return lambda k: controller.track_base(ts[k], aim[k], rot[k], now[k], pos_env[k])


def _driver(controller, targets: TickTargets, base: BaseFrame) -> Callable[[int], None]:
    """drive(k): one controller tick towards tick k's targets (one environment)."""
    if isinstance(controller, QPController):
        return _qp_driver(controller, targets, base)
    if isinstance(controller, PoseIKController):
        return _ik_driver(controller, targets, base)
    ts = targets.t.tolist()  # any other controller: its own conversion, tick by tick
    return lambda k: controller.track(ts[k], Targets(targets.pos[k][None], targets.quat[k][None],
                                                     targets.vel[k][None]))


def track(robot, controller, diagnosis: StallDiagnosis, arms: list[str], targets: TickTargets,
          advance: Callable[[], None]) -> TrackResult:
    """Drive ``controller`` (for one environment of ``robot``) through ``targets`` (environment frame, one target
    per arm in ``arms`` order); ``advance()`` moves the robot to the next tick. Returns the measured joints and the
    stretches where an arm fell behind.

    The causes are looked for after the loop, from the measured states and the controller's telemetry of every
    tick (they only observe: the commands do not depend on them); the times include the conversion of the targets
    before the loop and that diagnosis."""
    t0, c0 = time.perf_counter(), time.process_time()
    frame = BaseFrame(*robot.base_frames())
    n = len(targets.t)
    q_log, v_log = np.empty((n, robot.model.n_dofs)), np.empty((n + 1, robot.model.n_dofs))
    v_log[0] = robot.read_states()[1][0]  # v_log[k + 1]: the velocity at tick k; v_log[0]: before the first
    drive, first = _driver(controller, targets, frame), len(controller.telemetry.t)
    for k in range(n):
        drive(k)  # reads the state at tick k and commands the step to tick k + 1
        q, v = robot.read_states()
        q_log[k], v_log[k + 1] = q[0], v[0]
        advance()
    log, diagnosed = _diagnose_all(diagnosis, arms, controller, first, _to_base(frame, targets), targets.t, q_log,
                                   v_log)
    return TrackResult(q_log, log.stretches(), time.perf_counter() - t0, time.process_time() - c0, diagnosed)


def _gated(controller, first: int, n: int, limits) -> np.ndarray:
    """The ticks (of n, from telemetry row ``first``) whose own controller error calls for a diagnosis."""
    tel = controller.telemetry
    pos = np.array(tel.pos_err[first:first + n]).max(axis=1)
    rot = np.array(tel.rot_err[first:first + n]).max(axis=1)
    return np.flatnonzero((pos > GATE * limits.pos_tol) | (rot > GATE * limits.rot_tol))


def _diagnose_all(diagnosis: StallDiagnosis, arms: list[str], controller, first: int, base: _BaseTargets,
                  t: np.ndarray, q: np.ndarray, v: np.ndarray) -> tuple[StretchLog, int]:
    """Every gated tick's diagnosis in tick order (a tick not gated: every arm on track) -> (log, gated ticks)."""
    log, last = StretchLog(arms), -2
    gated = _gated(controller, first, len(q), diagnosis.limits)
    for k in gated.tolist():
        if k != last + 1:  # on track in between
            for arm in arms:
                log.on_track(arm)
        _diagnose(diagnosis, log, arms, controller.telemetry.active_names[first + k], k, float(t[k]), q[k],
                  v[k + 1], v[k], base)
        last = k
    return log, len(gated)


def _diagnose(diagnosis: StallDiagnosis, log: StretchLog, arms: list[str], names: list, k: int, t: float,
              q: np.ndarray, v: np.ndarray, v_prev: np.ndarray, base: _BaseTargets) -> None:
    errors = diagnosis.errors(q, base.pos[k], base.R[k])
    rows = list(names[0]) if names else []
    for j, (arm, behind) in enumerate(zip(arms, diagnosis.behind(errors))):
        if not behind:
            log.on_track(arm)
            continue
        causes = diagnosis.causes(j, q, v, v_prev, base.pos[k, j], base.R[k, j], base.twist_in[k, j], rows,
                                  errors.tasks[j])
        log.behind(arm, k, t, float(errors.pos_err[j]), float(errors.rot_err[j]), causes)
