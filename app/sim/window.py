"""The PyBullet GUI window's inputs and drawings: parameter panel and sliders, key presses, text, the
viewing camera and status lights. Only this module and the scene talk to the window."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as pb


class Window:
    """The window of a GUI scene's client."""

    def __init__(self, client: int):
        self.client = client
        self._sliders: list[int] = []
        self._texts: dict[str, int] = {}
        self._shown: dict[str, tuple] = {}  # what each text slot shows now: (text, at, rgb, size)
        self._down: set[int] = set()  # keys seen pressed and not yet released

    @property
    def open(self) -> bool:
        """False once the user closed the window (or pressed ESC, which PyBullet takes as a close)."""
        return pb.isConnected(self.client)

    def add_slider(self, name: str, low: float, high: float, start: float = 0.0) -> int:
        """One slider in the parameter panel; returns its index for :meth:`sliders`."""
        self._sliders.append(pb.addUserDebugParameter(name, low, high, start, physicsClientId=self.client))
        return len(self._sliders) - 1

    def sliders(self) -> np.ndarray:
        """Every slider's value, in the order added. Shape (k,)."""
        return np.array([pb.readUserDebugParameter(s, physicsClientId=self.client) for s in self._sliders])

    def keys_pressed(self) -> set[int]:
        """Key codes pressed since the last call (ord('n') for 'n', ...), once per press.

        PyBullet keeps one state per key between two reads: a press released before the next read (a quick tap
        while a slow tick runs) shows only KEY_WAS_RELEASED, so a release of a key not seen down counts too."""
        pressed = set()
        for key, state in pb.getKeyboardEvents(physicsClientId=self.client).items():
            if state & pb.KEY_WAS_TRIGGERED or (state & pb.KEY_WAS_RELEASED and key not in self._down):
                pressed.add(key)
            if state & pb.KEY_IS_DOWN:
                self._down.add(key)
            elif state & pb.KEY_WAS_RELEASED:
                self._down.discard(key)
        return pressed

    def text(self, slot: str, lines: Sequence[str], at: Sequence[float], rgb=(0.05, 0.05, 0.05),
             size: float = 1.2) -> None:
        """Show ``lines`` at world point ``at`` (3,), replacing what ``slot`` showed before. A slot that already
        shows exactly this is left alone: each text call waits for the window's next frame (~20 ms here)."""
        text = "\n".join(lines)
        shown = (text, tuple(map(float, at)), tuple(map(float, rgb)), float(size))
        if self._shown.get(slot) == shown:
            return
        self._shown[slot] = shown
        previous = self._texts.get(slot, -1)
        self._texts[slot] = pb.addUserDebugText(text, list(map(float, at)), list(rgb), size,
                                                replaceItemUniqueId=previous, physicsClientId=self.client)

    def points(self, slot: str, points: np.ndarray, rgb=(0.0, 0.85, 1.0), size: float = 4.0) -> None:
        """Show ``points`` (k, 3) world [m] as dots (a planned path), replacing what ``slot`` showed; rows with a NaN
        are left out, none removes the slot's dots. Drawn only when they change (each call waits a window frame)."""
        pts = np.asarray(points, dtype=float).reshape(-1, 3)
        pts = pts[np.isfinite(pts).all(axis=1)]
        shown = pts.round(6).tobytes()
        if self._shown.get(slot) == shown:
            return
        self._shown[slot] = shown
        previous = self._texts.pop(slot, -1)
        if previous >= 0:
            pb.removeUserDebugItem(previous, physicsClientId=self.client)
        if len(pts):
            self._texts[slot] = pb.addUserDebugPoints(pts.tolist(), [list(rgb)] * len(pts), size,
                                                      physicsClientId=self.client)

    def look_at(self, target: Sequence[float], distance: float = 0.9, yaw_deg: float = 45.0,
                pitch_deg: float = -30.0) -> None:
        """Point the window's camera at ``target`` (3,) [m]."""
        pb.resetDebugVisualizerCamera(distance, yaw_deg, pitch_deg, list(map(float, target)),
                                      physicsClientId=self.client)

    def look_along(self, eye: Sequence[float], forward: Sequence[float], distance: float = 0.3) -> None:
        """Put the window's camera at ``eye`` (3,) [m] looking along ``forward`` (3,), world frame (the window keeps
        z up: no roll, and straight up or down is tilted by 0.1 deg)."""
        f = np.asarray(forward, dtype=float) / np.linalg.norm(forward)
        pitch = float(np.clip(np.degrees(np.arcsin(np.clip(f[2], -1.0, 1.0))), -89.9, 89.9))
        # PyBullet's debug camera looks along (-sin yaw cos pitch, cos yaw cos pitch, sin pitch)
        yaw = float(np.degrees(np.arctan2(-f[0], f[1])))
        self.look_at(np.asarray(eye, dtype=float) + distance * f, distance, yaw, pitch)

    def preview(self, view: np.ndarray, projection: np.ndarray, width: int, height: int) -> np.ndarray:
        """A picture from a camera of our own (view, projection (4, 4), OpenGL conventions) by the window's
        OpenGL renderer, shown in the window's RGB preview pane; returns it, (height, width, 3) uint8."""
        pb.configureDebugVisualizer(pb.COV_ENABLE_RGB_BUFFER_PREVIEW, 1, physicsClientId=self.client)
        _, _, rgba, _, _ = pb.getCameraImage(int(width), int(height), np.asarray(view, dtype=float).T.ravel().tolist(),
                                             np.asarray(projection, dtype=float).T.ravel().tolist(),
                                             renderer=pb.ER_BULLET_HARDWARE_OPENGL, physicsClientId=self.client)
        return np.asarray(rgba, dtype=np.uint8).reshape(int(height), int(width), 4)[..., :3].copy()

    def hide_preview(self) -> None:
        pb.configureDebugVisualizer(pb.COV_ENABLE_RGB_BUFFER_PREVIEW, 0, physicsClientId=self.client)

    def right(self) -> np.ndarray:
        """The window camera's unit right vector (3,) in the world frame."""
        horizontal = np.array(pb.getDebugVisualizerCamera(physicsClientId=self.client)[6])
        return horizontal / np.linalg.norm(horizontal)

    def camera(self) -> tuple[float, float, float]:
        """The window camera's (distance [m], yaw [deg], pitch [deg])."""
        info = pb.getDebugVisualizerCamera(physicsClientId=self.client)
        return info[10], info[8], info[9]


class StatusLights:
    """One visual-only sphere per environment whose colour shows its status.

    Args:
        client: PyBullet client. positions: World positions (n, 3) [m]. radius: [m].
    """

    def __init__(self, client: int, positions: np.ndarray, radius: float = 0.02):
        self.client = client
        shape = pb.createVisualShape(pb.GEOM_SPHERE, radius=radius, rgbaColor=(0.6, 0.6, 0.6, 1),
                                     physicsClientId=client)
        self.bodies = [pb.createMultiBody(0, -1, shape, list(map(float, p)), physicsClientId=client)
                       for p in positions]
        self._rgb: list[tuple | None] = [None] * len(self.bodies)

    def set(self, rgb_per_env: Sequence[tuple[int, int, int]]) -> None:
        """Colours (0-255 RGB) per environment; only changed ones are sent."""
        for i, rgb in enumerate(rgb_per_env):
            if rgb != self._rgb[i]:
                pb.changeVisualShape(self.bodies[i], -1, rgbaColor=[c / 255 for c in rgb] + [1.0],
                                     physicsClientId=self.client)
                self._rgb[i] = rgb

    def remove(self) -> None:
        """Take the lights out of the scene."""
        for body in self.bodies:
            pb.removeBody(body, physicsClientId=self.client)
        self.bodies, self._rgb = [], []
