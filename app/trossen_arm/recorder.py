"""What a script did to the simulated arms, recorded for its video, its report and the GUI's drawings.

Per arm (:class:`ArmTrack`): its commands by kind, its pose goal (the tool frame the latest position goal
aims at, in the world frame), its status at a glance, its limit events (a goal clipped to the position limits,
the controller entering an error state with its log), both as they begin, its collisions as they begin (the arm's link, what it
touched) and how far a measured joint went past its position limits. Per video frame (``FPS`` frames per
simulated second): every arm's joints, pose goal, status and gripper position (:class:`ArmFrame`). Per arm its
joints sampled for the motion-quality report (app.trossen_arm.motion_samples).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from app.control.status import reached
from app.kinematics.rotations import matrix_to_quat, so3_log
from app.trossen_arm.motion_samples import ArmMotion

FPS = 30  # video frames per simulated second


class ArmStatus(IntEnum):
    """An arm's state at a glance (the video's status dot and the GUI's light): the legend's order."""

    REACHED = 0  # at its pose goal, within the report's tolerances
    MOVING = 1  # away from its pose goal
    NO_GOAL = 2  # no pose goal (none given yet, or driven by velocities or efforts)
    CONTACT = 3  # a link touches something
    ERROR = 4  # the controller is in an error state


STATUS_STYLE = {  # code -> (label, RGB 0-255)
    ArmStatus.REACHED: ("goal reached", (40, 200, 70)),
    ArmStatus.MOVING: ("moving", (250, 200, 30)),
    ArmStatus.NO_GOAL: ("no pose goal", (150, 150, 160)),
    ArmStatus.CONTACT: ("in contact", (240, 120, 20)),
    ArmStatus.ERROR: ("error state", (230, 30, 60)),
}


class Goal(NamedTuple):
    """What a command aims an arm at. pose: the tool frame's goal (4x4) in the arm's base frame, None for a
    command without one (velocities, efforts); keep: the command leaves the arm's pose goal as it was (a
    gripper goal); clipped: joints whose goal lies beyond their position limits (the controller clips it)."""

    pose: np.ndarray | None = None
    keep: bool = False
    clipped: tuple[int, ...] = ()


class ArmFrame(NamedTuple):
    """One arm at one video frame: robot DOFs q (n_dofs,), its pose goal (4x4 world; None: none), status, the
    gripper's position [m]."""

    q: np.ndarray
    goal: np.ndarray | None
    status: int
    gripper: float


@dataclass
class ArmTrack:
    """What one arm did (see the module docstring); times [s] of simulated time."""

    commands: dict[str, list[float]] = field(default_factory=dict)  # kind -> [count, first t]
    goal: np.ndarray | None = None  # the tool's pose goal in the world (4x4)
    tool: object = None  # the app.trossen_arm.cartesian.ToolKinematics the goal is a pose of
    events: list[dict] = field(default_factory=list)  # limit events and collisions, in time order
    error: str = "none"
    touching: frozenset = frozenset()
    clipped: frozenset = frozenset()  # the joints the latest goal clipped
    limit_excess_max: float = 0.0  # [rad or m] how far a measured joint went past its position limits, at most
    status: int = int(ArmStatus.NO_GOAL)


class Recorder:
    """The tracks of a world's arms and the video's frames (see the module docstring)."""

    def __init__(self) -> None:
        self.arms: dict[str, ArmTrack] = {}
        self.times: list[float] = []
        self.frames: list[dict[str, ArmFrame]] = []
        self.motions: dict[str, ArmMotion] = {}  # each arm's samples for the motion-quality report
        self._next = 0.0

    def track(self, arm: str) -> ArmTrack:
        return self.arms.setdefault(arm, ArmTrack())

    def command(self, arm: str, kind: str, t: float, goal: Goal, base_T: np.ndarray, tool) -> None:
        """A command of ``kind`` to ``arm`` at simulated time t [s], aiming at ``goal``; base_T: the arm's base
        frame in the world (4x4); tool: the driver's ToolKinematics (its tool frame, the goal's)."""
        track = self.track(arm)
        entry = track.commands.setdefault(kind, [0, t])
        entry[0] += 1
        begun = sorted(set(goal.clipped) - track.clipped)
        if begun:  # as clipping begins: a stream of 1 kHz goals at a limit is one event
            track.events.append({"t": round(t, 4), "kind": "goal_clipped", "joints": begun, "command": kind})
        track.clipped = frozenset(goal.clipped)
        if not goal.keep:
            track.goal = None if goal.pose is None else base_T @ goal.pose
            track.tool = tool

    def step(self, t: float, slots: dict) -> bool:
        """After a physics step at simulated time t [s]: limit excess and error events; where a video frame is
        due, collisions, statuses and the frame. Returns whether a frame was taken."""
        for name, slot in slots.items():
            self._limits(t, self.track(name), slot.controller)
            if name not in self.motions:
                self.motions[name] = ArmMotion()
            self.motions[name].sample(t, slot.controller)
        if t + 1e-9 < self._next:
            return False
        self._next = t + 1.0 / FPS
        self.times.append(t)
        self.frames.append({name: self._frame(t, self.track(name), slot, slots) for name, slot in slots.items()})
        return True

    def _limits(self, t: float, track: ArmTrack, c) -> None:
        q = c.measured.q
        lo = np.fromiter((lim.position_min for lim in c.limits), float, len(q))
        hi = np.fromiter((lim.position_max for lim in c.limits), float, len(q))
        track.limit_excess_max = max(track.limit_excess_max, float(np.max(np.maximum(lo - q, q - hi))))
        if c.error_state.name != track.error:
            track.error = c.error_state.name
            if track.error != "none":
                track.events.append({"t": round(t, 4), "kind": track.error, "log": c.error_log})

    def _frame(self, t: float, track: ArmTrack, slot, slots: dict) -> ArmFrame:
        touching = touched(slot, slots)
        for other, link in sorted(touching - track.touching):
            track.events.append({"t": round(t, 4), "kind": "collision", "link": link, "with": other})
        track.touching = touching
        track.status = int(self._status(track, slot))
        m = slot.controller.measured
        return ArmFrame(m.q_dofs.copy(), track.goal, track.status, float(m.q[-1]))

    def _status(self, track: ArmTrack, slot) -> ArmStatus:
        if slot.controller.error_state.name != "none":
            return ArmStatus.ERROR
        if track.touching:
            return ArmStatus.CONTACT
        if track.goal is None or track.tool is None:
            return ArmStatus.NO_GOAL
        pos_err, rot_err = pose_error(slot.base_T @ track.tool.tool_pose(slot.controller.measured.q_dofs), track.goal)
        return ArmStatus.REACHED if reached(pos_err, rot_err) else ArmStatus.MOVING


def pose_error(T: np.ndarray, T_goal: np.ndarray) -> tuple[float, float]:
    """(position error [m], rotation error [rad]) of pose T from T_goal (4x4 each, one frame)."""
    angle = float(np.linalg.norm(so3_log(T[:3, :3].T @ T_goal[:3, :3])))
    return float(np.linalg.norm(T[:3, 3] - T_goal[:3, 3])), angle


def pose_quat(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,) [m], quaternion (4,) wxyz) of a 4x4 pose."""
    return T[:3, 3].copy(), matrix_to_quat(T[:3, :3])


def touched(slot, slots: dict) -> frozenset:
    """(what, the arm's link) of every contact of the arm of ``slot`` now: a box by name, another arm by its name."""
    names = {b.body_id: name for name, other in slots.items() for b in other.robot.bodies}
    robot = slot.robot
    boxes = {i: box for box, ids in robot.box_ids.items() for i in ids}
    return frozenset((boxes.get(body) or names.get(body, f"body {body}"),
                      robot.model.link_names[robot.pb_to_model_link[link]])
                     for body, links in robot.contact_links(0).items() for link in links)
