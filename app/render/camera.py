"""Headless frames from PyBullet's TinyRenderer (markers are bodies, so they show)."""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app.config.schema import CameraSection


class Camera:
    """A fixed camera. eye/target in the world frame [m]; frames are (height, width, 3) uint8.

    Args:
        client: PyBullet client. section: eye, target, fov [deg], width, height.
        width, height: Override the section's size (must be even for H.264).
    """

    def __init__(self, client: int, section: CameraSection, width: int | None = None, height: int | None = None):
        self.client = client
        self.width, self.height = width or section.width, height or section.height
        self.view = pb.computeViewMatrix(section.eye, section.target, (0.0, 0.0, 1.0), physicsClientId=client)
        self.proj = pb.computeProjectionMatrixFOV(section.fov, self.width / self.height, 0.02, 30.0,
                                                  physicsClientId=client)

    def frame(self) -> np.ndarray:
        """An RGB image of the current scene. Shape (height, width, 3), uint8."""
        _, _, rgba, _, _ = pb.getCameraImage(self.width, self.height, self.view, self.proj, shadow=0,
                                             renderer=pb.ER_TINY_RENDERER, physicsClientId=self.client)
        return np.asarray(rgba, dtype=np.uint8).reshape(self.height, self.width, 4)[..., :3].copy()


def framing_camera(section: CameraSection, env_origins: np.ndarray) -> CameraSection:
    """The scene's camera moved back so that every environment is in view (unchanged for one env)."""
    if len(env_origins) <= 1:
        return section
    lo, hi = env_origins.min(axis=0), env_origins.max(axis=0)
    centre = 0.5 * (lo + hi)
    span = float(np.max(hi - lo)) + 1.0
    eye, target = np.array(section.eye), np.array(section.target)
    direction = (eye - target) / np.linalg.norm(eye - target)
    distance = max(np.linalg.norm(eye - target), 0.5 * span / np.tan(np.radians(section.fov) / 2) * 1.1)
    new_target = centre + target
    return CameraSection(tuple(new_target + direction * distance), tuple(new_target), section.fov, section.width,
                         section.height)
