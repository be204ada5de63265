"""Pictures of the scene: headless frames from PyBullet's TinyRenderer (markers are bodies, so they
show), and the GUI window's own view."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pybullet as pb


class Layer(NamedTuple):
    """A rendered picture: pixels (height, width) uint32, each the RGBA bytes of one pixel, and TinyRenderer's
    depth buffer (height, width) float32 (0 near .. 1 far, the same scale for every picture of one camera)."""

    pixels: np.ndarray
    depth: np.ndarray


class Camera:
    """A fixed camera from its view (4, 4) and projection (4, 4) matrices (OpenGL conventions, world -> camera ->
    clip, as app.render.framing.CameraView gives them) and image size [px]. Frames are (height, width, 3) uint8."""

    def __init__(self, client: int, view: np.ndarray, projection: np.ndarray, width: int, height: int,
                 light: dict | None = None):
        self.client, self.width, self.height = client, int(width), int(height)
        self.light = dict(light or {"shadow": 0})  # getCameraImage's lighting keywords (LookSpec.render_kwargs)
        self.view = np.asarray(view, dtype=float).T.ravel().tolist()  # PyBullet's matrices are column-major
        self.proj = np.asarray(projection, dtype=float).T.ravel().tolist()

    @classmethod
    def looking_at(cls, client: int, eye: Sequence[float], target: Sequence[float], fov: float, width: int,
                   height: int) -> Camera:
        """Eye and target (3,) in the world frame [m], vertical fov [deg], z up."""
        view = pb.computeViewMatrix(list(eye), list(target), (0.0, 0.0, 1.0), physicsClientId=client)
        proj = pb.computeProjectionMatrixFOV(fov, width / height, 0.02, 30.0, physicsClientId=client)
        return cls(client, np.reshape(view, (4, 4)).T, np.reshape(proj, (4, 4)).T, width, height)

    def frame(self, backdrop: Layer | None = None) -> np.ndarray:
        """An RGB image of the current scene; over ``backdrop`` (bodies rendered once elsewhere, absent here),
        each pixel from the nearer of the two. Shape (height, width, 3), uint8."""
        return self.rgb(self.over(backdrop))

    def over(self, backdrop: Layer | None) -> Layer:
        """The current scene's picture laid over ``backdrop`` by depth (each pixel and its depth from the nearer
        of the two); the scene's own picture where ``backdrop`` is None."""
        layer = self.layer()
        if backdrop is None:
            return layer
        nearer = layer.depth < backdrop.depth
        return Layer(np.where(nearer, layer.pixels, backdrop.pixels), np.where(nearer, layer.depth, backdrop.depth))

    def rgb(self, layer: Layer) -> np.ndarray:
        """A layer's pixels as an RGB image, (height, width, 3) uint8."""
        return np.ascontiguousarray(layer.pixels.view(np.uint8).reshape(self.height, self.width, 4)[..., :3])

    def layer(self) -> Layer:
        """TinyRenderer's picture of the current scene, lit as ``light`` says (without shadows, the default, each
        body is shaded alone, so pictures of disjoint sets of bodies combine by depth into the picture of all)."""
        _, _, rgba, depth, _ = pb.getCameraImage(self.width, self.height, self.view, self.proj, **self.light,
                                                 renderer=pb.ER_TINY_RENDERER, physicsClientId=self.client)
        pixels = np.ascontiguousarray(rgba, dtype=np.uint8).reshape(self.height, self.width * 4)
        return Layer(pixels.view(np.uint32), np.asarray(depth, dtype=np.float32).reshape(self.height, self.width))


def window_view(client: int, width: int = 640, height: int = 480) -> np.ndarray:
    """The GUI window's current view rendered by OpenGL. Shape (height, width, 3), uint8."""
    info = pb.getDebugVisualizerCamera(physicsClientId=client)
    _, _, rgba, _, _ = pb.getCameraImage(width, height, info[2], info[3], renderer=pb.ER_BULLET_HARDWARE_OPENGL,
                                         physicsClientId=client)
    return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[..., :3].copy()


def save_window_view(client: int, path: Path, width: int = 640, height: int = 480) -> Path:
    """:func:`window_view` into a PNG."""
    import imageio.v2 as imageio

    path.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(path, window_view(client, width, height))
    return path
