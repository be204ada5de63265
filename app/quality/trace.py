"""Batched samples of a rollout's joints for the motion-quality report: per environment its measured positions and
velocities and its commanded positions since its (re)start, one row per ``record``, ``dt`` seconds apart."""

from __future__ import annotations

import numpy as np

from app.quality.limits import MotionLimits
from app.quality.live_flags import LiveFlags
from app.quality.motion_report import MotionSamples, analyse


class MotionTrace:
    """The DOFs ``dofs`` of ``n_envs`` environments, judged against ``limits`` (one per DOF of ``dofs``);
    ``branches``: ``q_cmd (n_envs, n_all_dofs) -> (n_envs,)`` the IK branch of each command (app.ik.branches), or
    None where the arm has none."""

    def __init__(self, limits: MotionLimits, dofs: np.ndarray, n_envs: int, dt: float, branches=None):
        self.limits, self.dofs, self.dt = limits, np.asarray(dofs, dtype=int), float(dt)
        self.branches = branches
        self.live = LiveFlags(limits, dofs, n_envs, dt)  # what each newest sample passed, for the pictures
        self._branch: list[list[int]] = [[] for _ in range(n_envs)]
        self._q: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
        self._v: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
        self._cmd: list[list[np.ndarray]] = [[] for _ in range(n_envs)]

    @classmethod
    def of_robot(cls, robot, dt: float, branches=None) -> MotionTrace:
        """The arm DOFs (``robot.arm_dofs``: its grippers' left out) of every environment of a scene robot, judged
        against its description's limits (MotionLimits.of_model)."""
        return cls(MotionLimits.of_model(robot.model, robot.arm_dofs), robot.arm_dofs, robot.n_envs, dt, branches)

    def reset(self, envs, q: np.ndarray, v: np.ndarray) -> None:
        """Environments ``envs`` start again from q, v (n_envs, n_all_dofs), nothing commanded yet."""
        for e in envs:
            self._q[e], self._v[e] = [q[e, self.dofs]], [v[e, self.dofs]]
            self._cmd[e] = [np.full(len(self.dofs), np.nan)]
            self._branch[e] = [-1]
        self.live.reset(envs, q, v)

    def record(self, q: np.ndarray, v: np.ndarray, q_cmd: np.ndarray | None) -> None:
        """One sample of every environment: q, v measured, q_cmd commanded (n_envs, n_all_dofs; None: nothing
        commanded)."""
        labels = self.branches(q_cmd) if self.branches is not None and q_cmd is not None else None
        self.live.update(q, v, q_cmd)
        for e in range(len(self._q)):
            self._branch[e].append(-1 if labels is None else int(labels[e]))
            self._q[e].append(q[e, self.dofs])
            self._v[e].append(v[e, self.dofs])
            self._cmd[e].append(np.full(len(self.dofs), np.nan) if q_cmd is None else q_cmd[e, self.dofs])

    def report(self, e: int) -> dict:
        """Environment e's report (app.quality.motion_report.analyse) over its samples since its reset."""
        samples = MotionSamples(self.dt, np.array(self._q[e]), np.array(self._cmd[e]), np.array(self._v[e]),
                                branch=np.array(self._branch[e]) if self.branches is not None else None)
        return analyse(samples, self.limits)

    def reports(self) -> list[dict]:
        """Every environment's report."""
        return [self.report(e) for e in range(len(self._q))]
