"""Camera framing and projection (pure numpy): a camera that fills the picture with what moves, and the
matrices that map world points to pixels (OpenGL conventions, as PyBullet's computeViewMatrix and
computeProjectionMatrixFOV: the renderer and the overlay use the same ones)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

UP = np.array([0.0, 0.0, 1.0])
NEAR, FAR = 0.02, 30.0  # [m] clipping planes


class CameraView(NamedTuple):
    """A pinhole camera. eye, target (3,) world [m]; fov_deg: vertical field of view; width, height [px]."""

    eye: np.ndarray
    target: np.ndarray
    fov_deg: float
    width: int
    height: int
    up: tuple | None = None  # the picture's up (3,), world frame; None: z (a camera on a link may look straight down)

    @property
    def view(self) -> np.ndarray:
        """World -> camera (4, 4), camera looking down its -z."""
        f = _unit(self.target - self.eye)
        s = _unit(np.cross(f, UP if self.up is None else np.asarray(self.up, dtype=float)))
        u = np.cross(s, f)
        M = np.eye(4)
        M[0, :3], M[1, :3], M[2, :3] = s, u, -f
        M[:3, 3] = -M[:3, :3] @ self.eye
        return M

    @property
    def projection(self) -> np.ndarray:
        """Camera -> clip (4, 4)."""
        t = 1.0 / np.tan(np.radians(self.fov_deg) / 2)
        P = np.zeros((4, 4))
        P[0, 0], P[1, 1] = t / (self.width / self.height), t
        P[2, 2], P[2, 3] = (FAR + NEAR) / (NEAR - FAR), 2 * FAR * NEAR / (NEAR - FAR)
        P[3, 2] = -1.0
        return P

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates (..., 2) (x right, y down) of world points (..., 3), and whether each lies in
        front of the camera (...,)."""
        h = np.concatenate([points, np.ones(points.shape[:-1] + (1,))], axis=-1)
        clip = h @ (self.projection @ self.view).T
        w = clip[..., 3]
        safe = np.where(w > 1e-9, w, 1e-9)
        px = np.stack([(clip[..., 0] / safe + 1) * 0.5 * self.width, (1 - clip[..., 1] / safe) * 0.5 * self.height],
                      axis=-1)
        return px, w > NEAR

    def metres_per_pixel(self, point: np.ndarray) -> float:
        """Size of one pixel [m] at the depth of ``point`` (3,)."""
        depth = float(np.dot(point - self.eye, _unit(self.target - self.eye)))
        return 2 * max(depth, NEAR) * np.tan(np.radians(self.fov_deg) / 2) / self.height


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def fit_view(points: np.ndarray, eye: np.ndarray, target: np.ndarray, fov_deg: float, width: int, height: int,
             margin: float = 0.05, top_reserve: float = 0.0) -> CameraView:
    """The camera looking along ``target - eye`` (the scene's viewing direction) that frames every world point
    of ``points`` (n, 3) as tightly as possible: ``margin`` (fraction of the half-size) free at the edges and
    the top ``top_reserve`` (fraction of the height) left for a caption."""
    eye, target = np.asarray(eye, dtype=float), np.asarray(target, dtype=float)
    f = _unit(target - eye)
    s = _unit(np.cross(f, UP))
    u = np.cross(s, f)
    T_v = np.tan(np.radians(fov_deg) / 2)
    T_h = T_v * width / height
    half_x, half_y = 1 - margin, 1 - margin - top_reserve  # usable half-sizes in normalised coordinates
    centre_y = -top_reserve  # where the content's middle goes
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    for _ in range(10):  # distance for the current centre, then re-centre on the projected extremes
        rel = points - centre
        x, y, z = rel @ s, rel @ u, rel @ f
        distance = max(float(np.max(np.maximum(np.abs(x) / (T_h * half_x), np.abs(y) / (T_v * half_y)) - z)),
                       4 * NEAR)
        depth = distance + z
        nx, ny = x / (depth * T_h), y / (depth * T_v)
        shift_x, shift_y = 0.5 * (nx.max() + nx.min()), 0.5 * (ny.max() + ny.min()) - centre_y
        if abs(shift_x) < 1e-4 and abs(shift_y) < 1e-4:
            break
        centre = centre + (shift_x * T_h * s + shift_y * T_v * u) * float(np.median(depth))
    return CameraView(centre - distance * f, centre, float(fov_deg), int(width), int(height))


def box_corners(centre: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The 8 corners (8, 3) of an axis-aligned box of ``size`` (3,) about ``centre`` (3,) [m]."""
    signs = np.array([[i, j, k] for i in (-0.5, 0.5) for j in (-0.5, 0.5) for k in (-0.5, 0.5)])
    return np.asarray(centre) + signs * np.asarray(size)
