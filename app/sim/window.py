"""The PyBullet GUI window's inputs and view: parameter sliders, key presses, the viewing camera."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as pb


class Window:
    """The window of a GUI scene's client."""

    def __init__(self, client: int):
        self.client = client
        self._sliders: list[int] = []

    def add_sliders(self, names: Sequence[str], low: float, high: float, start: float = 0.0) -> None:
        """One slider per name in the parameter panel."""
        self._sliders += [pb.addUserDebugParameter(name, low, high, start, physicsClientId=self.client)
                          for name in names]

    def sliders(self) -> np.ndarray:
        """Every slider's value, in the order added. Shape (k,)."""
        return np.array([pb.readUserDebugParameter(s, physicsClientId=self.client) for s in self._sliders])

    def keys_pressed(self) -> set[int]:
        """Key codes pressed since the last call (ord('n') for 'n', ...)."""
        keys = pb.getKeyboardEvents(physicsClientId=self.client)
        return {key for key, state in keys.items() if state & pb.KEY_WAS_TRIGGERED}

    def look_at(self, target: Sequence[float], distance: float = 0.9, yaw_deg: float = 45.0,
                pitch_deg: float = -30.0) -> None:
        """Point the window's camera at ``target`` (3,) [m]."""
        pb.resetDebugVisualizerCamera(distance, yaw_deg, pitch_deg, list(target), physicsClientId=self.client)
