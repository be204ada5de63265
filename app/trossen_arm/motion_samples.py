"""Each simulated arm's six arm joints sampled for the motion-quality report (app.quality) of a driver script:
measured positions, velocities and efforts, and the position the controller commands where a joint is in
position mode (NaN in the other modes, where the joint is driven by velocity or effort), ``HZ`` times a simulated
second. Judged against the arm's own joint limits as the script left them (velocity_max, effort_max; Trossen's
defaults unless set_joint_limits changed them) and the app's acceleration and jerk bounds (app.quality.limits)."""

from __future__ import annotations

import numpy as np

from app.quality.limits import MotionLimits
from app.quality.live_flags import LiveFlags
from app.quality.motion_report import MotionSamples, all_events, analyse
from app.trossen_arm.enums import Mode
from app.trossen_arm.joint_space import N_JOINTS

HZ = 100  # samples per simulated second: at most MAX_SAMPLE_HZ, a divisor of the 1 kHz physics step
ARM = N_JOINTS - 1  # the gripper (metres, a force-limited motor) is not judged
NAMES = tuple(f"joint_{j}" for j in range(ARM))


class ArmMotion:
    """One arm's samples since the script began."""

    def __init__(self) -> None:
        self.t0: float | None = None
        self._next = 0.0
        self.q, self.v, self.effort, self.cmd = [], [], [], []
        self.live: LiveFlags | None = None  # what each newest sample passed, for the window (watch_live)

    def sample(self, t: float, controller) -> None:
        """After a physics step at t [s]: a sample where one is due."""
        if t + 1e-9 < self._next:
            return
        if self.t0 is None:
            self.t0 = t
        self._next = self.t0 + len(self.q) / HZ + 1.0 / HZ
        m = controller.measured
        self.q.append(m.q[:ARM].copy())
        self.v.append(m.v[:ARM].copy())
        self.effort.append(m.effort[:ARM].copy())
        position = np.array([mode == Mode.position for mode in controller.modes[:ARM]])
        lim = controller.limits
        held = np.clip(controller.desired[0, :ARM], [x.position_min for x in lim[:ARM]],
                       [x.position_max for x in lim[:ARM]])
        self.cmd.append(np.where(position & (controller.error_state.name == "none"), held, np.nan))
        if self.live is not None:
            self.live.limits = _limits(controller)  # as the script sets them, as the report judges
            self.live.update(self.q[-1][None], self.v[-1][None], self.cmd[-1][None])

    def watch_live(self, controller) -> LiveFlags:
        """From now on each sample is also flagged as it comes (the window's marks), from the newest sample."""
        if self.live is None:
            self.live = LiveFlags(_limits(controller), 1, 1.0 / HZ)
            if self.q:
                self.live.reset([0], self.q[-1][None], self.v[-1][None])
        return self.live

    def report(self, controller) -> dict | None:
        """The report over the samples (None before any)."""
        if len(self.q) < 2:
            return None
        return analyse(*self._samples(controller))

    def events(self, controller) -> list:
        """Every passed limit (app.quality.motion_report.all_events), for the video's marks."""
        return [] if len(self.q) < 2 else all_events(*self._samples(controller))

    def _samples(self, controller) -> tuple[MotionSamples, MotionLimits]:
        samples = MotionSamples(1.0 / HZ, np.array(self.q), np.array(self.cmd), np.array(self.v),
                                np.array(self.effort), t0=self.t0 or 0.0)
        return samples, _limits(controller)


def _limits(controller) -> MotionLimits:
    """The arm joints' limits as the script left them (velocity_max, effort_max) and the app's bounds."""
    lim = controller.limits[:ARM]
    return MotionLimits.make(NAMES, [x.velocity_max for x in lim], [x.effort_max for x in lim],
                             "the arm's joint limits (Trossen's defaults unless set)")
