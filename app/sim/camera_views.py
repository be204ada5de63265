"""The GUI's named cameras: a key cycles the window's view through the scene's cameras (``cameras:``, fixed ones
and ones on a link, in the selected environment) and back to the free view. While a camera is chosen the window's
camera sits at it looking along its axis (the window keeps z up and its own field of view), and the preview pane
shows that camera's exact picture (its roll, field of view and aspect), refreshed with every redraw."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from app.sim.cameras import SceneCameras, projection_matrix, view_matrix
from app.sim.window import Window
from app.specs import CameraStream

PREVIEW_HEIGHT = 240  # [px] of the preview picture (its width from the camera's aspect)


class CameraViews:
    """Which named camera the window shows (None: the free view) and its pictures.

    Args:
        scene, robot: The GUI's built scene and robot. streams: The scene's named cameras.
    """

    def __init__(self, scene, robot, streams: Sequence[CameraStream]):
        self.streams = tuple(streams)
        self.cameras = SceneCameras(scene, robot, self.streams) if self.streams else None
        self.index: int | None = None
        self.last_picture: np.ndarray | None = None  # the latest preview, (h, w, 3) uint8

    @property
    def name(self) -> str | None:
        """The chosen camera's name, None for the free view."""
        return None if self.index is None else self.streams[self.index].name

    def cycle(self) -> str | None:
        """The next camera (after the last: the free view again); returns its name."""
        if not self.streams:
            return None
        self.index = 0 if self.index is None else (self.index + 1 if self.index + 1 < len(self.streams) else None)
        return self.name

    def show(self, window: Window, q: np.ndarray, origin: np.ndarray) -> np.ndarray | None:
        """Put the window at the chosen camera of the environment at world ``origin`` (3,) with joints q
        (n_dofs,) and refresh the preview; returns the preview picture (None in the free view)."""
        if self.index is None:
            return None
        stream = self.streams[self.index]
        p, R = self.cameras.poses(q)[stream.name]
        eye = p + np.asarray(origin, dtype=float)
        window.look_along(eye, R[:, 2])
        width = 2 * round(PREVIEW_HEIGHT * stream.width / stream.height / 2)
        small = dataclasses.replace(stream, width=width, height=PREVIEW_HEIGHT)
        self.last_picture = window.preview(view_matrix(eye, R), projection_matrix(small), width, PREVIEW_HEIGHT)
        return self.last_picture
