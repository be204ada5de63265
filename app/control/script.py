"""A waypoint script: rows of {t, pos, quat, gripper}, in the spirit of Trossen's scripted policies, so that
users write their own sequences without code. Between rows the target moves linearly in position and along
the shortest rotation (slerp); the gripper takes each row's value from its time on. Positions are relative to
the robot's base position, as every timed task's; ``gripper`` is the closing fraction (0 open, 1 closed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.control.motion_protocol import MotionBase, Targets
from app.kinematics.rotations import matrix_to_quat, quat_normalize, quat_to_matrix, so3_exp, so3_log
from app.validation import Check, CheckContext, Where

MAX_SCRIPT_ROWS = 10_000  # waypoints of a script motion (each checked, interpolated every tick)


@dataclass(frozen=True)
class ScriptRow:
    """One waypoint: reached at time t [s], position [m], orientation (w, x, y, z; pointing down unless given),
    gripper closing 0..1 (open unless given). A scene file's row names its t and pos."""

    REQUIRED_KEYS: ClassVar[tuple[str, ...]] = ("t", "pos")
    t: float = 0.0
    pos: tuple[float, float, float] = (0.3, 0.0, 0.15)
    quat: tuple[float, float, float, float] = (0.7071067811865476, 0.0, 0.7071067811865476, 0.0)
    gripper: float = 0.0


@dataclass(frozen=True)
class ScriptMotion:
    """Follow ``waypoints`` (times strictly increasing, the first at t = 0); after the last row, hold it."""

    type: ClassVar[str] = "script"
    waypoints: tuple[ScriptRow, ...] = ()
    pos_mask: tuple[bool, bool, bool] = (True, True, True)
    rot_mask: tuple[bool, bool, bool] = (True, True, True)

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        """(key path, link) of what this motion moves: the robot's end effector (see
        app.control.motions.PoseMotion.moved_links)."""
        return [(("robot", "ee_link"), robot.ee_link)]

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """What the rows must be (rows for app.validation.raise_first), and that the scene has a gripper if they
        close it."""
        rows, k = self.waypoints, at("waypoints")
        if len(rows) > MAX_SCRIPT_ROWS:
            return [(k, False, f"{len(rows)} rows; a script takes at most {MAX_SCRIPT_ROWS} (for longer motions, track "
                               "an end-effector trajectory file with app.track)")]
        times = [r.t for r in rows]
        return [
            (k, len(rows) >= 1 and times[0] == 0.0, "needs rows {t, pos, quat, gripper}, the first at t: 0"),
            (k, all(b > a for a, b in zip(times, times[1:])), f"times must increase strictly, got {times}"),
        ] + [row for i, r in enumerate(rows) for row in (  # each row's own values, named by their row
            (at("waypoints", i, "quat"), any(r.quat), f"must be a nonzero (w, x, y, z) quaternion, got {r.quat}"),
            (at("waypoints", i, "gripper"), 0 <= r.gripper <= 1,
             f"must be in [0, 1] (0 open, 1 closed), got {r.gripper}"))] + [
            (k, ctx.scene.robot.gripper is not None or all(r.gripper == 0 for r in rows),
             "rows close the gripper but the scene's robot has none: add robot.gripper")]

    def targets(self, n_envs: int, base_pos: np.ndarray, seed: int, envs: np.ndarray | None = None) -> ScriptPlayer:
        """The run's target source (app.episode.feedback.make_motion): the same script in every environment."""
        return ScriptPlayer(self, n_envs if envs is None else len(envs), base_pos)


class ScriptPlayer(MotionBase):
    """Targets of a ScriptMotion for ``n_envs`` environments (the same script in each). base_pos (3,) [m]."""

    n_targets = 1

    def __init__(self, task: ScriptMotion, n_envs: int, base_pos: np.ndarray):
        rows = task.waypoints
        self.n_envs = int(n_envs)
        self.times = np.array([r.t for r in rows], dtype=float)
        self.pos = np.array([r.pos for r in rows], dtype=float) + np.asarray(base_pos, dtype=float)
        self.rot = quat_to_matrix(quat_normalize(np.array([r.quat for r in rows], dtype=float)))
        self.steps = so3_log(np.swapaxes(self.rot[:-1], -1, -2) @ self.rot[1:])  # rotation of each stretch
        self.grip = np.array([r.gripper for r in rows], dtype=float)

    def _row(self, t: float) -> int:
        return int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 1))

    def __call__(self, t: float) -> Targets:
        i = self._row(t)
        if i == len(self.times) - 1:
            pos, rot, vel = self.pos[i], self.rot[i], np.zeros(3)
        else:
            span = self.times[i + 1] - self.times[i]
            s = (t - self.times[i]) / span
            pos = self.pos[i] + s * (self.pos[i + 1] - self.pos[i])
            rot = self.rot[i] @ so3_exp(s * self.steps[i])
            vel = (self.pos[i + 1] - self.pos[i]) / span
        n = self.n_envs
        return Targets(np.broadcast_to(pos, (n, 1, 3)).copy(), np.broadcast_to(matrix_to_quat(rot), (n, 1, 4)).copy(),
                       np.broadcast_to(vel, (n, 1, 3)).copy())

    def closing_at(self, t: float) -> np.ndarray:
        """The gripper's closing fraction (n_envs,) at t [s]: the last row's at or before t."""
        return np.full(self.n_envs, self.grip[self._row(t)])
