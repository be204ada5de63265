"""What PyBullet's window shows while a script runs (``APP_TROSSEN_GUI=1``), as app.run's GUI draws its targets and
lights: a copy of the arms (app.trossen_arm.replica, in the window) posed at each recorded frame, each arm's pose
goal as a frame and a light beside its base in the colour of its status (app.trossen_arm.recorder's STATUS_STYLE),
and above it MOTION with a limit its motion passed (app.quality). The physics stays in the world's own headless
client: a window's client answers each call in milliseconds, too slow for 1 kHz steps. The window's camera starts on
the arms; the user may move it."""

from __future__ import annotations

import time

import numpy as np

from app.sim.window import StatusLights, Window
from app.specs import BoxSpec
from app.trossen_arm.recorder import STATUS_STYLE, ArmStatus, Recorder
from app.trossen_arm.replica import ArmsReplica

LIGHT_OFFSET = np.array([0.0, -0.14, 0.03])  # [m] from an arm's base, world frame (app.episode.gui's)
AXIS_LENGTH = 0.08  # [m]
AWAY = np.array([0.0, 0.0, -10.0])  # [m] where a goal marker waits while its arm has no pose goal
WALL_INTERVAL = 1.0 / 30.0  # [s] of wall-clock time between two redraws at most (a window's call may wait a frame)
MOTION_HOLD_S = 1.0  # [s] of wall clock a limit an arm's motion passed stays written above it


class LiveView:
    """The window (a replica of the world's arms over ``boxes``); :meth:`update` after each recorded frame."""

    def __init__(self, boxes: tuple[BoxSpec, ...]):
        self.replica = ArmsReplica((), boxes, gui=True)
        self.scene, self.window = self.replica.scene, Window(self.replica.scene.client)
        self._names: list[str] = []  # the arms shown, in the replica's order
        self._frames: list = []  # each arm's goal marker (a DebugFrame)
        self._lights: StatusLights | None = None
        self._drawn = -np.inf  # [s] wall clock of the last redraw
        self._notes: dict[str, tuple[str, float]] = {}  # arm -> (a limit its motion passed, shown until [s] wall)
        self._light_at = np.zeros((0, 3))  # [m] each arm's light, world frame
        self._slots: dict = {}  # the world's arms at the last update

    @property
    def client(self) -> int:
        """The window's PyBullet client."""
        return self.scene.client

    def update(self, recorder: Recorder, slots: dict) -> None:
        """The arms at the recorder's latest frame, their goals and lights (new arms added, the camera on them);
        nothing within WALL_INTERVAL of the last redraw unless an arm is new."""
        now = time.perf_counter()
        self._slots = slots
        if list(slots) != self._names:
            self._add(slots)
        elif now - self._drawn < WALL_INTERVAL:
            return
        self._drawn = now
        frame = recorder.frames[-1]
        n = max(len(a.q) for a in frame.values())
        q = np.zeros((len(self._names), n))
        away = np.eye(4)
        away[:3, 3] = AWAY
        for i, name in enumerate(self._names):
            arm = frame[name]
            q[i, :len(arm.q)] = arm.q
            self._frames[i].set_T(away if arm.goal is None else arm.goal)
        self.replica.pose(q)
        self.scene.update_debug_objects()
        self._lights.set([STATUS_STYLE[ArmStatus(frame[name].status)][1] for name in self._names])
        self._motion_text(recorder, now)

    def _motion_text(self, recorder: Recorder, now: float) -> None:
        """Above each arm's light, a limit its motion passed (app.quality), held MOTION_HOLD_S of wall clock."""
        for i, name in enumerate(self._names):
            motion, slot = recorder.motions.get(name), self._slots.get(name)
            flag = motion.watch_live(slot.controller).take()[0] if motion is not None and slot is not None else ""
            if flag:
                self._notes[name] = (flag, now + MOTION_HOLD_S)
            note, until = self._notes.get(name, ("", 0.0))
            self.window.text(f"motion {name}", [f"MOTION {note}" if note and now <= until else ""],
                             self._light_at[i] + [0.0, 0.0, 0.06], rgb=(0.8, 0.0, 0.0), size=1.0)

    def _add(self, slots: dict) -> None:
        for name, slot in slots.items():
            if name not in self._names:
                self.replica.add(slot.place)
                self._names.append(name)
                self._frames.append(self.scene.draw_debug_frame(np.eye(4), axis_length=AXIS_LENGTH))
        bases = np.array([slots[name].place.base_pos for name in self._names], dtype=float)
        if self._lights is not None:
            self._lights.remove()
        self._lights = StatusLights(self.client, bases + LIGHT_OFFSET)
        self._light_at = bases + LIGHT_OFFSET
        self.window.look_at(bases.mean(axis=0) + (0.15, 0.0, 0.15), distance=0.9 + float(np.ptp(bases[:, 1])))

    def close(self) -> None:
        self.replica.close()
