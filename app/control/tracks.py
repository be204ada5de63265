"""End-effector tracks: a timed joint path turned into end-effector poses sampled at a fixed rate (the planner's
output as data), and segments whose environments may follow such a track instead of a straight line.

A track is what the controllers are given to follow: the motion reads its poses as targets (with their velocity
as feed-forward), so a planned move runs through the same controllers as every other motion.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.control.segments import Segments


class Track(NamedTuple):
    """End-effector poses every 1 / ``rate`` [s] from the track's start, in the environment's frame: pos (K, 3)
    [m], rot (K, 3, 3), vel (K, 3) [m/s]; q (K, n_dofs) the planned joints at those instants (for pictures and
    reports). K >= 1; the last sample is at rest at the goal."""

    pos: np.ndarray
    rot: np.ndarray
    vel: np.ndarray
    q: np.ndarray
    rate: float

    @property
    def duration(self) -> float:
        """[s] from the first sample to the last."""
        return (len(self.pos) - 1) / self.rate

    def at(self, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pose at s [s] after the start (clamped to the track): position and velocity interpolated
        linearly between samples, the rotation of the nearest sample (samples are ms apart)."""
        x = np.clip(np.asarray(s, dtype=float) * self.rate, 0.0, len(self.pos) - 1)
        i = np.minimum(np.floor(x).astype(int), len(self.pos) - 2) if len(self.pos) > 1 else np.zeros_like(x, int)
        f = (x - i)[..., None] if len(self.pos) > 1 else np.zeros(np.shape(x) + (1,))
        j = np.minimum(i + 1, len(self.pos) - 1)
        pos = (1 - f) * self.pos[i] + f * self.pos[j]
        vel = (1 - f) * self.vel[i] + f * self.vel[j]
        return pos, self.rot[np.rint(x).astype(int)], vel


PATH_POINTS = 48  # points of a track a picture draws (app.render.overlay)


def polylines(tracks: list[Track | None], points: int = PATH_POINTS) -> np.ndarray:
    """Each track's end-effector path as ``points`` points spread over its samples (its last sample last), NaN
    for an environment without a track: (n_envs, points, 3) float32 [m], environment frames."""
    out = np.full((len(tracks), points, 3), np.nan, dtype=np.float32)
    for e, track in enumerate(tracks):
        if track is not None:
            out[e] = track.pos[np.linspace(0, len(track.pos) - 1, points).round().astype(int)]
    return out


class TrackedSegments(Segments):
    """:class:`Segments` whose environments may each follow a :class:`Track` (:meth:`follow`); a later
    :meth:`move_to` or :meth:`hold` of an environment ends its track there (from where the track's target is)."""

    def __init__(self, pos: np.ndarray, rot: np.ndarray, speed: float, accel: float, angular_speed: float):
        super().__init__(pos, rot, speed, accel, angular_speed)
        self.tracks: list[Track | None] = [None] * len(pos)

    def follow(self, env: int, t: float, track: Track) -> None:
        """Environment ``env`` follows ``track`` from t [s]; its goal (p1, R1) is the track's last pose."""
        self.tracks[env] = None
        self.move_to(np.array([env]), t, track.pos[-1:], track.rot[-1:])
        self.p0[env], self.R0[env] = track.pos[0], track.rot[0]
        self.T[env] = max(track.duration, 1e-9)
        self.tracks[env] = track

    def move_to(self, envs: np.ndarray, t: float, pos: np.ndarray, rot: np.ndarray) -> None:
        envs = np.asarray(envs, dtype=int)
        if not len(envs):
            return
        p_now, R_now, _ = self.at(t)  # where a track being left has its target now
        for e in envs:
            self.tracks[e] = None
        self._place(envs, p_now, R_now)
        super().move_to(envs, t, pos, rot)

    def _place(self, envs: np.ndarray, p_now: np.ndarray, R_now: np.ndarray) -> None:
        """Environments ``envs`` at rest at their present targets, so the base class starts them from there."""
        self.p0[envs], self.p1[envs], self.R0[envs], self.R1[envs] = p_now[envs], p_now[envs], R_now[envs], R_now[envs]
        self.w[envs] = 0.0

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pos, rot, vel = super().at(t)
        for e, track in enumerate(self.tracks):
            if track is not None:
                pos[e], rot[e], vel[e] = track.at(t - self.t0[e])
        return pos, rot, vel
