"""Straight-line end-effector segments with a minimum-jerk time law, one per environment.

A segment goes from pose (p0, R0) to (p1, R1): p(t) = p0 + s(tau) (p1 - p0), R(t) = R0 exp(s(tau) log(R0^T R1)),
tau = (t - t0) / T, s = 10 tau^3 - 15 tau^4 + 6 tau^5. Its duration keeps the peak speed (1.875 d / T),
peak acceleration (5.774 d / T^2) and peak angular speed within the given bounds.
"""

from __future__ import annotations

import numpy as np

from app.control.motion_protocol import Targets
from app.kinematics.rotations import matrix_to_quat, so3_exp, so3_log

PEAK_SPEED, PEAK_ACCEL = 1.875, 5.7735  # of the minimum-jerk profile, times d / T and d / T^2
MIN_DURATION = 0.1  # [s]


def duration(distance: np.ndarray, angle: np.ndarray, speed: float, accel: float, angular_speed: float) -> np.ndarray:
    """The shortest duration [s] (n,) that keeps the bounds for distances [m] and angles [rad] (n,)."""
    return np.maximum.reduce([PEAK_SPEED * distance / speed, np.sqrt(PEAK_ACCEL * distance / accel),
                              PEAK_SPEED * angle / angular_speed, np.full(np.shape(distance), MIN_DURATION)])


class Segments:
    """One segment per environment; :meth:`move_to` replaces those of some environments.

    Args:
        pos (n_envs, 3) [m], rot (n_envs, 3, 3): where every environment starts, at rest.
        speed [m/s], accel [m/s^2], angular_speed [rad/s]: the bounds every segment keeps.
    """

    def __init__(self, pos: np.ndarray, rot: np.ndarray, speed: float, accel: float, angular_speed: float):
        n = len(pos)
        self.p0, self.p1 = np.array(pos, dtype=float), np.array(pos, dtype=float)
        self.R0, self.R1 = np.array(rot, dtype=float), np.array(rot, dtype=float)
        self.w = np.zeros((n, 3))  # log(R0^T R1)
        self.t0, self.T = np.zeros(n), np.full(n, MIN_DURATION)
        self.bounds = (float(speed), float(accel), float(angular_speed))

    def move_to(self, envs: np.ndarray, t: float, pos: np.ndarray, rot: np.ndarray) -> None:
        """New segments for environments ``envs`` from where their targets are at t [s] to pos (k, 3),
        rot (k, 3, 3)."""
        envs = np.asarray(envs, dtype=int)
        if not len(envs):
            return
        p_now, R_now, _ = self.at(t)
        self.p0[envs], self.R0[envs] = p_now[envs], R_now[envs]
        self.p1[envs], self.R1[envs] = pos, rot
        self.w[envs] = so3_log(np.swapaxes(R_now[envs], -1, -2) @ rot)
        d = np.linalg.norm(pos - p_now[envs], axis=1)
        self.T[envs] = duration(d, np.linalg.norm(self.w[envs], axis=1), *self.bounds)
        self.t0[envs] = t

    def hold(self, envs: np.ndarray, t: float) -> None:
        """Environments ``envs`` stop where their targets are at t (a segment of length zero)."""
        p, R, _ = self.at(t)
        envs = np.asarray(envs, dtype=int)
        self.move_to(envs, t, p[envs], R[envs])

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Targets at t: pos (n_envs, 3), rot (n_envs, 3, 3), linear velocity (n_envs, 3) [m/s]."""
        tau = np.clip((t - self.t0) / self.T, 0.0, 1.0)
        s = tau ** 3 * (10 - 15 * tau + 6 * tau ** 2)
        ds = 30 * tau ** 2 * (1 - tau) ** 2 / self.T
        pos = self.p0 + s[:, None] * (self.p1 - self.p0)
        rot = self.R0 @ so3_exp(s[:, None] * self.w)
        return pos, rot, ds[:, None] * (self.p1 - self.p0)

    def done(self, t: float) -> np.ndarray:
        """Environments whose segment has ended by t (n_envs,) bool."""
        return t >= self.t0 + self.T - 1e-12



def segment_targets(segs: list[Segments] | None, rest: np.ndarray, t: float, k: int = 1) -> Targets:
    """The targets at t [s] of ``k`` arms, one Segments each (n_envs, k, ...); before the segments exist (None:
    the first observation has not come) every arm's target rests at ``rest`` (n_envs, 3) [m] with the quaternion
    (0, 1, 0, 0), what a camera frames before the run starts."""
    n = len(rest)
    if segs is None:
        quat = np.broadcast_to([0.0, 1.0, 0.0, 0.0], (n, k, 4)).copy()
        return Targets(np.repeat(rest[:, None], k, axis=1), quat, np.zeros((n, k, 3)))
    at = [s.at(t) for s in segs]
    return Targets(np.stack([a[0] for a in at], 1), matrix_to_quat(np.stack([a[1] for a in at], 1)),
                   np.stack([a[2] for a in at], 1))
