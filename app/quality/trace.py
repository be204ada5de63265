"""Batched samples of a rollout's joints for the motion-quality report: per environment its measured positions and
velocities and its commanded positions since its (re)start, one row per ``record``, ``dt`` seconds apart."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.control.controller_base import ACCEL_MAX
from app.quality.limits import MotionLimits
from app.quality.live_flags import LiveFlags
from app.quality.motion_report import MotionSamples, analyse


class TraceOptions(NamedTuple):
    """``branches``: ``q_cmd (n_envs, n_all_dofs) -> (n_envs,)`` the IK branch of each command (app.ik.branches),
    None where the arm has none; ``measured_velocity``: the simulator's joint velocities are the motion's (False
    where joints are set, not driven: a kinematic controller's, whose measured velocity says nothing), else the
    positions are differenced; ``keep_s``: only the last this many seconds are judged (None: all; a GUI session
    that runs until closed)."""

    branches: object = None
    measured_velocity: bool = True
    keep_s: float | None = None


class MotionTrace:
    """The DOFs ``dofs`` of ``n_envs`` environments, judged against ``limits`` (one per DOF of ``dofs``)."""

    def __init__(self, limits: MotionLimits, dofs: np.ndarray, n_envs: int, dt: float,
                 options: TraceOptions = TraceOptions()):
        self.limits, self.dofs, self.dt, self.options = limits, np.asarray(dofs, dtype=int), float(dt), options
        self.live = LiveFlags(limits, dofs, n_envs, dt)  # what each newest sample passed, for the pictures
        self._keep = None if options.keep_s is None else max(4, int(options.keep_s / self.dt))
        self._rows: list[list[tuple]] = [[] for _ in range(n_envs)]  # per environment (q, v, q_cmd, branch)
        self._dropped = [0] * n_envs  # per environment the samples left behind (keep_s)

    @classmethod
    def of_robot(cls, robot, dt: float, accel_max: float | None = None,
                 options: TraceOptions = TraceOptions()) -> MotionTrace:
        """The arm DOFs (``robot.arm_dofs``: its grippers' left out) of every environment of a scene robot, judged
        against its description's limits and the controller's acceleration bound ``accel_max`` (MotionLimits)."""
        limits = MotionLimits.of_model(robot.model, robot.arm_dofs, accel_max or ACCEL_MAX)
        return cls(limits, robot.arm_dofs, robot.n_envs, dt, options)

    def reset(self, envs, q: np.ndarray, v: np.ndarray) -> None:
        """Environments ``envs`` start again from q, v (n_envs, n_all_dofs), nothing commanded yet."""
        nothing = np.full(len(self.dofs), np.nan)
        for e in envs:
            self._rows[e] = [(q[e, self.dofs], v[e, self.dofs], nothing, -1)]
            self._dropped[e] = 0
        self.live.reset(envs, q, v if self.options.measured_velocity else np.zeros_like(v))

    def record(self, q: np.ndarray, v: np.ndarray, q_cmd: np.ndarray | None) -> None:
        """One sample of every environment: q, v measured, q_cmd commanded (n_envs, n_all_dofs; None: nothing
        commanded)."""
        labels = self.options.branches(q_cmd) if self.options.branches is not None and q_cmd is not None else None
        self.live.update(q, v if self.options.measured_velocity else None, q_cmd)
        nothing = np.full(len(self.dofs), np.nan)
        for e, rows in enumerate(self._rows):
            rows.append((q[e, self.dofs], v[e, self.dofs], nothing if q_cmd is None else q_cmd[e, self.dofs],
                         -1 if labels is None else int(labels[e])))
            if self._keep is not None and len(rows) > 2 * self._keep:
                self._dropped[e] += len(rows) - self._keep
                del rows[:-self._keep]

    def report(self, e: int) -> dict:
        """Environment e's report (app.quality.motion_report.analyse) over its samples since its reset (the last
        ``keep_s`` seconds where the options keep no more)."""
        q, v, cmd, branch = (np.array(column) for column in zip(*self._rows[e]))
        samples = MotionSamples(self.dt, q, cmd, v if self.options.measured_velocity else None,
                                branch=branch if self.options.branches is not None else None,
                                t0=self._dropped[e] * self.dt)
        return analyse(samples, self.limits)

    def reports(self) -> list[dict]:
        """Every environment's report."""
        return [self.report(e) for e in range(len(self._rows))]
