"""Named cameras of a scene as observations: fixed ones and ones attached to a robot link, each a pinhole with
square pixels at its own size; their intrinsics, their poses (extrinsics) from the robot's state, and their
pictures by PyBullet's TinyRenderer.

Frames: a camera's pose is its *optical* frame (x right, y down, z forward, ROS's ``*_optical_frame``) in the
environment frame; OpenGL's camera (x right, y up, looking along -z) is that frame turned half a turn about x.
Pixels: (u, v) from the image's top-left corner, u to the right; a point at p_cam (optical frame) lands at
u = fx x / z + cx, v = fy y / z + cy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.kinematics.rotations import quat_normalize, quat_to_matrix
from app.sim.backdrop import Backdrops
from app.sim.camera import Camera
from app.specs import CameraStream

GL_FROM_OPTICAL = np.diag([1.0, -1.0, -1.0])


def intrinsics(cam: CameraStream) -> np.ndarray:
    """The pinhole matrix K (3, 3) [px]: fy from the vertical fov, fx = fy, principal point at the centre."""
    fy = 0.5 * cam.height / np.tan(np.radians(cam.fov) / 2.0)
    return np.array([[fy, 0.0, cam.width / 2.0], [0.0, fy, cam.height / 2.0], [0.0, 0.0, 1.0]])


def looking_at(eye: Sequence[float], target: Sequence[float], up: Sequence[float]) -> np.ndarray:
    """The optical frame's rotation (3, 3) (columns x right, y down, z forward) of a camera at eye facing target."""
    z = np.subtract(target, eye).astype(float)
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)


def view_matrix(p: np.ndarray, R: np.ndarray) -> np.ndarray:
    """OpenGL's view matrix (4, 4) (world -> camera) of an optical frame at p (3,) with rotation R (3, 3)."""
    R_gl = R @ GL_FROM_OPTICAL
    view = np.eye(4)
    view[:3, :3], view[:3, 3] = R_gl.T, -R_gl.T @ p
    return view


def projection_matrix(cam: CameraStream) -> np.ndarray:
    """OpenGL's perspective projection (4, 4) of the camera's vertical fov, aspect width / height and clip planes."""
    f = 1.0 / np.tan(np.radians(cam.fov) / 2.0)
    n, fa = cam.near, cam.far
    return np.array([[f * cam.height / cam.width, 0, 0, 0], [0, f, 0, 0],
                     [0, 0, (fa + n) / (n - fa), 2 * fa * n / (n - fa)], [0, 0, -1, 0]])


class SceneCameras:
    """The named cameras of one environment of a built scene.

    Args:
        scene: The built Scene. robot: Its Robot (link cameras ride its links). cameras: The streams.
        backdrops: The scene is a replica drawn only by these cameras (app.episode.replica): a fixed camera
            renders its boxes once (app.sim.backdrop) and then, with the boxes hidden, only what moves, the same
            pixels and depths; for the plain look only (shadows and lights fall across bodies).
    """

    def __init__(self, scene, robot, cameras: Sequence[CameraStream], backdrops: bool = False):
        self.scene, self.robot, self.cameras = scene, robot, tuple(cameras)
        self._backdrops = Backdrops(scene) if backdrops else None
        self.K = {c.name: intrinsics(c) for c in self.cameras}
        self._proj = {c.name: projection_matrix(c) for c in self.cameras}
        self._offset = {c.name: (np.asarray(c.offset_pos, dtype=float),
                                 quat_to_matrix(quat_normalize(np.asarray(c.offset_quat, dtype=float))))
                        for c in self.cameras}

    def poses(self, q: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each camera's optical frame in the environment frame at joints q (n_dofs,): name -> (p (3,), R (3, 3))."""
        out = {}
        links = [c.link for c in self.cameras if c.link is not None]
        if links:
            idx = [self.robot.model.link_index(link) for link in links]
            pos, quat = self.robot.model.forward_kinematics(np.asarray(q, dtype=float), idx)
            R_b, p_b = self.robot.base_frames()
            frames = {link: (R_b @ pos[k] + p_b, R_b @ quat_to_matrix(quat[k])) for k, link in enumerate(links)}
        for c in self.cameras:
            if c.link is None:
                out[c.name] = (np.asarray(c.eye, dtype=float), looking_at(c.eye, c.target, c.up))
            else:
                p_l, R_l = frames[c.link]
                off_p, off_R = self._offset[c.name]
                out[c.name] = (p_l + R_l @ off_p, R_l @ off_R)
        return out

    def render(self, poses: dict[str, tuple[np.ndarray, np.ndarray]], env: int = 0,
               names: Sequence[str] | None = None, depths: dict | None = None) -> dict[str, np.ndarray]:
        """Pictures of the scene as it stands (its robot and objects posed by the caller) from the cameras
        ``names`` (default all) at ``poses`` (environment ``env``'s frame): name -> (height, width, 3) uint8.
        ``depths``, where given, receives for each of them that records depth (``CameraStream.depth``) its
        depth along the optical axis [m], (height, width) float32, ``inf`` where nothing lies within ``far``."""
        origin = np.asarray(self.scene.env_origins[env], dtype=float)
        images = {}
        for c in self.cameras:
            if names is not None and c.name not in names:
                continue
            p, R = poses[c.name]
            V, P = view_matrix(p + origin, R), self._proj[c.name]
            view = Camera(self.scene.client, V, P, c.width, c.height, self.scene.look.render_kwargs())
            backdrop = None if self._backdrops is None else self._backdrops.for_view(V, P, c.width, c.height,
                                                                                    fixed=c.link is None)
            layer = view.over(backdrop)
            images[c.name] = view.rgb(layer)
            if depths is not None and c.depth:
                depths[c.name] = metric_depth(layer.depth, c.near, c.far)
        return images


def metric_depth(buffer: np.ndarray, near: float, far: float) -> np.ndarray:
    """OpenGL's depth buffer (values in [0, 1]) of a perspective projection with clip planes ``near``/``far`` [m] as
    the depth along the optical axis [m] (float32; ``inf`` where the buffer holds the far plane: nothing there)."""
    d = np.asarray(buffer, dtype=np.float64)
    z = far * near / (far - (far - near) * d)
    return np.where(d >= 1.0 - 1e-7, np.inf, z).astype(np.float32)
