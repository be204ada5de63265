"""Batched samples of a rollout's joints for the motion-quality report: per environment its measured positions and
velocities and its commanded positions since its (re)start, one row per ``record``, ``dt`` seconds apart."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.quality.limits import MotionLimits
from app.quality.live_flags import LiveFlags
from app.quality.motion_report import MotionSamples, analyse

BRANCH_EVERY_S = 0.05  # [s] between two labellings of the commands' IK branches (a closed-form solve each)


class TraceOptions(NamedTuple):
    """``branches``: ``q_cmd (n_envs, n_all_dofs) -> (n_envs,)`` the IK branch of each command (app.ik.branches),
    None where the arm has none; labelled every BRANCH_EVERY_S (a change is timed to that); ``measured_velocity``:
    the simulator's joint velocities are the motion's (False where joints are set, not driven: a kinematic
    controller's, whose measured velocity says nothing), else the positions are differenced; ``keep_s``: only the last this many seconds are judged (None: all; a GUI session
    that runs until closed)."""

    branches: object = None
    measured_velocity: bool = True
    keep_s: float | None = None


class MotionTrace:
    """The DOFs ``dofs`` of ``n_envs`` environments, judged against ``limits`` (one per DOF of ``dofs``)."""

    def __init__(self, limits: MotionLimits, dofs: np.ndarray, n_envs: int, dt: float,
                 options: TraceOptions = TraceOptions()):
        self.limits, self.dofs, self.dt, self.options = limits, np.asarray(dofs, dtype=int), float(dt), options
        self.live: LiveFlags | None = None  # what each newest sample passed, where pictures are made (watch_live)
        self._label_every = max(1, int(round(BRANCH_EVERY_S / self.dt)))
        self._recorded = 0
        self._keep = None if options.keep_s is None else max(4, int(options.keep_s / self.dt))
        self._rows: list[list[tuple]] = [[] for _ in range(n_envs)]  # per environment (q, v, q_cmd, branch)
        self._dropped = [0] * n_envs  # per environment the samples left behind (keep_s)

    @classmethod
    def of_robot(cls, robot, dt: float, accel_max: float | None = None,
                 options: TraceOptions = TraceOptions()) -> MotionTrace:
        """The arm DOFs (``robot.arm_dofs``: its grippers' left out) of every environment of a scene robot, judged
        against its description's limits and the controller's acceleration bound ``accel_max`` (MotionLimits)."""
        limits = MotionLimits.of_model(robot.model, robot.arm_dofs, accel_max)
        return cls(limits, robot.arm_dofs, robot.n_envs, dt, options)

    def watch_live(self) -> LiveFlags:
        """From now on each sample is also flagged as it comes (LiveFlags, started from the newest samples)."""
        if self.live is None:
            n = len(self.dofs)
            self.live = LiveFlags(self.limits, len(self._rows), self.dt)
            started = [e for e, rows in enumerate(self._rows) if rows]  # the others start with their reset
            if started:
                q = np.zeros((len(self._rows), n))
                v = np.zeros_like(q)
                for e in started:
                    q[e] = self._rows[e][-1][0]
                    v[e] = self._rows[e][-1][1] if self.options.measured_velocity else 0.0
                self.live.reset(started, q, v)
        return self.live

    def reset(self, envs, q: np.ndarray, v: np.ndarray) -> None:
        """Environments ``envs`` start again from q, v (n_envs, n_all_dofs), nothing commanded yet."""
        nothing = np.full(len(self.dofs), np.nan)
        for e in envs:
            self._rows[e] = [(q[e, self.dofs], v[e, self.dofs], nothing, -1)]
            self._dropped[e] = 0
        if self.live is not None:
            self.live.reset(envs, q[:, self.dofs], v[:, self.dofs] if self.options.measured_velocity
                            else np.zeros((len(q), len(self.dofs))))

    def record(self, q: np.ndarray, v: np.ndarray, q_cmd: np.ndarray | None) -> None:
        """One sample of every environment: q, v measured, q_cmd commanded (n_envs, n_all_dofs; None: nothing
        commanded)."""
        labelled = self.options.branches is not None and q_cmd is not None and self._recorded % self._label_every == 0
        labels = self.options.branches(q_cmd) if labelled else None
        self._recorded += 1
        q, v = q[:, self.dofs], v[:, self.dofs]
        cmd = np.full_like(q, np.nan) if q_cmd is None else q_cmd[:, self.dofs]
        if self.live is not None:
            self.live.update(q, v if self.options.measured_velocity else None, cmd)
        for e, rows in enumerate(self._rows):
            rows.append((q[e], v[e], cmd[e], -1 if labels is None else int(labels[e])))
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
