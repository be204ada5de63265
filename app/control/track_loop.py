"""Track an end-effector trajectory sampled at the control rate with a controller, tick by tick: the measured
joints at every tick, and every stretch where an arm fell behind with its cause (app.control.stall_causes).

The loop talks to a :class:`~app.control.robot.ControlledRobot` and a controller (``ik`` or ``qp``) only; what
advances the robot between ticks (an ideal integrator, or physics steps) is the caller's ``advance``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from app.control.motions import Targets
from app.control.qp_controller import QPController
from app.control.stall_causes import StallDiagnosis
from app.control.stall_stretches import Stretch, StretchLog
from app.control.trajectory_targets import TickTargets
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import quat_to_matrix

GATE = 0.5  # arms are diagnosed when the controller's own error passes this fraction of a tolerance


class TrackResult(NamedTuple):
    """q (n_ticks, n_dofs): the measured joints at every tick; stretches: in order of their start; wall_s, cpu_s:
    the loop's wall-clock and CPU time [s] (CPU: what it costs on an idle machine); diagnosed_ticks: ticks on which
    the causes were looked for."""

    q: np.ndarray
    stretches: list[Stretch]
    wall_s: float
    cpu_s: float
    diagnosed_ticks: int


class _BaseTargets(NamedTuple):
    pos: np.ndarray  # (n, k, 3)
    R: np.ndarray  # (n, k, 3, 3)
    twist_in: np.ndarray  # (n, k, 6)


def _to_base(base: BaseFrame, targets: TickTargets) -> _BaseTargets:
    n, k = targets.pos.shape[:2]
    pos = (targets.pos.reshape(-1, 3) - base.p) @ base.R
    R = np.matmul(base.R.T, quat_to_matrix(targets.quat.reshape(-1, 4)))
    twist = base.twists_to_base(targets.twist_in.reshape(-1, 6))
    return _BaseTargets(pos.reshape(n, k, 3), R.reshape(n, k, 3, 3), twist.reshape(n, k, 6))


def _driver(controller, targets: TickTargets) -> Callable[[int], None]:
    """drive(k): one controller tick towards tick k's targets (one environment): the QP gets the full twist (its
    ``track`` feeds forward the linear velocity only), one target per frame task."""
    ts = targets.t.tolist()
    if isinstance(controller, QPController):
        twist = np.concatenate([targets.vel, targets.omega], axis=2)  # (n, arms, 6)
        pos, quat = targets.pos, targets.quat
        if targets.pos.shape[1] == 1:  # one task: (1, 3), (1, 4), (1, 6) per tick
            pos, quat, twist = pos[:, 0], quat[:, 0], twist[:, 0]
        if not any(any(task.rot_mask) for task in controller.tasks):
            quat = None
        return lambda k: controller.step(ts[k], pos[k][None], None if quat is None else quat[k][None],
                                         twist[k][None])
    return lambda k: controller.track(ts[k], Targets(targets.pos[k][None], targets.quat[k][None],
                                                     targets.vel[k][None]))


def _gate(controller, limits) -> bool:
    """Whether the controller's own error of this tick calls for a diagnosis."""
    tel = controller.telemetry
    return bool(tel.pos_err[-1].max() > GATE * limits.pos_tol or tel.rot_err[-1].max() > GATE * limits.rot_tol)


def track(robot, controller, diagnosis: StallDiagnosis, arms: list[str], targets: TickTargets,
          advance: Callable[[], None], on_tick: Callable[[int], None] | None = None) -> TrackResult:
    """Drive ``controller`` (for one environment of ``robot``) through ``targets`` (environment frame, one target
    per arm in ``arms`` order); ``advance()`` moves the robot to the next tick. Returns the measured joints and the
    stretches where an arm fell behind."""
    base = _to_base(BaseFrame(*robot.base_frames()), targets)
    n = len(targets.t)
    q_log = np.empty((n, robot.model.n_dofs))
    log, diagnosed = StretchLog(arms), 0
    v_prev = robot.read_states()[1][0]
    drive, ts = _driver(controller, targets), targets.t.tolist()
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(n):
        drive(k)  # reads the state at tick k and commands the step to tick k + 1
        q, v = (a[0] for a in robot.read_states())
        q_log[k] = q
        if _gate(controller, diagnosis.limits):
            diagnosed += 1
            _diagnose(diagnosis, log, arms, controller, k, ts[k], q, v, v_prev, base)
        else:
            for arm in arms:
                log.on_track(arm)
        v_prev = v
        advance()
        if on_tick is not None:
            on_tick(k)
    return TrackResult(q_log, log.stretches(), time.perf_counter() - t0, time.process_time() - c0, diagnosed)


def _diagnose(diagnosis: StallDiagnosis, log: StretchLog, arms: list[str], controller, k: int, t: float,
              q: np.ndarray, v: np.ndarray, v_prev: np.ndarray, base: _BaseTargets) -> None:
    errors = diagnosis.errors(q, base.pos[k], base.R[k])
    names = controller.telemetry.active_names[-1]
    rows = list(names[0]) if names else []
    for j, (arm, behind) in enumerate(zip(arms, diagnosis.behind(errors))):
        if not behind:
            log.on_track(arm)
            continue
        causes = diagnosis.causes(j, q, v, v_prev, base.pos[k, j], base.R[k, j], base.twist_in[k, j], rows)
        log.behind(arm, k, t, float(errors.pos_err[j]), float(errors.rot_err[j]), causes)
