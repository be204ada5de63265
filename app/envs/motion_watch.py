"""Each environment's episode watched for motion quality (app.quality): the arm joints measured after every
environment step and what they were commanded, judged when the episode ends.

The commanded motion is the policy's own where it commands joints (the ``joint`` mode's goals: a jump between two
actions shows as a step, though the motors are then led there within their bounds), else the controller's motor
targets at the step's end (the end-effector modes). Samples are one environment step apart."""

from __future__ import annotations

import numpy as np

from app.quality.limits import MotionLimits
from app.quality.motion_report import MotionSamples, analyse

SOURCES = ("commanded", "simulated")
QUANTITIES = ("velocity", "acceleration", "jerk")


class MotionWatch:
    """Samples per environment since its reset; ``report(e)`` judges environment e's episode so far."""

    def __init__(self, robot, n_envs: int, dt: float, joint_mode: bool):
        self.robot, self.dt, self.joint_mode = robot, float(dt), joint_mode
        self.dofs = np.asarray(robot.arm_dofs)
        self.limits = MotionLimits.of_model(robot.model, self.dofs)
        self._q: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
        self._v: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
        self._cmd: list[list[np.ndarray]] = [[] for _ in range(n_envs)]

    def reset(self, envs: np.ndarray, q: np.ndarray, v: np.ndarray) -> None:
        """Environments ``envs`` start again from q, v (n_envs, n_dofs): at rest where they are, nothing commanded."""
        for e in envs:
            self._q[e], self._v[e] = [q[e, self.dofs]], [v[e, self.dofs]]
            self._cmd[e] = [np.full(len(self.dofs), np.nan)]

    def record(self, q: np.ndarray, v: np.ndarray, q_goal: np.ndarray | None) -> None:
        """One step's end for every environment: q, v measured, ``q_goal`` the joint mode's goals (n_envs, n_dofs)
        or None (the motors' last targets are taken)."""
        cmd = q_goal if self.joint_mode else self.robot.last_command
        for e in range(len(self._q)):
            self._q[e].append(q[e, self.dofs])
            self._v[e].append(v[e, self.dofs])
            self._cmd[e].append(np.full(len(self.dofs), np.nan) if cmd is None else cmd[e, self.dofs])

    def report(self, e: int) -> dict:
        """Environment e's report (app.quality.motion_report.analyse) over its samples since its reset."""
        samples = MotionSamples(self.dt, np.array(self._q[e]), np.array(self._cmd[e]), np.array(self._v[e]))
        return analyse(samples, self.limits)


def episode_info(report: dict) -> dict:
    """The flat info keys of an episode's report: ``motion_verdict``, ``motion_first`` ('source quantity' of the
    first event, '' when smooth), ``motion_event`` (its text), and ``motion_<source>_<quantity>_ratio``: the peak
    over the joints of |value| / limit."""
    first = report["first_event"]
    out = {"motion_verdict": report["verdict"], "motion_first": "" if first is None else
           f"{first['source']} {first['quantity']}", "motion_event": "" if first is None else first["text"]}
    for source in SOURCES:
        for quantity in QUANTITIES:
            out[f"motion_{source}_{quantity}_ratio"] = _ratio(report, source, quantity)
    return out


def _ratio(report: dict, source: str, quantity: str) -> float:
    limits = report["limits"][quantity]
    best = 0.0
    for name, row in report["joints"].items():
        peak, limit = row.get(source, {}).get(f"{quantity}_peak"), limits.get(name)
        if peak is not None and limit:
            best = max(best, peak / limit)
    return best
