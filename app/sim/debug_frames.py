"""Genesis's ``scene.draw_debug_frame``: one coordinate frame per environment, in its own frame.

A :class:`DebugFrame` holds a pose in the environment frame (Genesis's 4x4 ``T``, or
``pos``/``quat`` wxyz) and one visual-only marker per environment it is drawn in (every
environment unless ``envs_idx`` names some). Frames drawn before ``scene.build`` appear in
every environment when it is built. ``set_pose``/``set_T``/``set_qpos`` queue a new pose,
applied by ``scene.update_debug_objects()`` (or ``scene.visualizer.update()``).
"""

from __future__ import annotations

import numpy as np

from app.errors import AppError, InputError
from app.kinematics.rotations import matrix_to_quat, quat_normalize
from app.sim.markers import FrameMarker
from app.validation import as_float_array, as_quaternions, as_vectors, check_finite


def pose_of(T_or_pos: object, quat: object) -> tuple[np.ndarray, np.ndarray]:
    """(pos (..., 3), quat (..., 4) wxyz) from a 4x4 transform (..., 4, 4) or from pos and quat."""
    arr = check_finite(as_float_array(T_or_pos, "T"), "T")
    if arr.shape[-2:] == (4, 4):
        if quat is not None:
            raise InputError("give a 4x4 T or pos and quat, not both")
        return arr[..., :3, 3].copy(), matrix_to_quat(arr[..., :3, :3])
    pos = as_vectors(arr, "pos", 3)
    q = np.array([1.0, 0.0, 0.0, 0.0]) if quat is None else as_quaternions(quat, "quat")
    return pos, q


class DebugFrame:
    """A frame drawn in some environments. ``envs`` (k,) indices; ``origins`` (n_envs, 3) world origins."""

    def __init__(self, pos: np.ndarray, quat: np.ndarray, axis_length: float, axis_radius: float,
                 origin_size: float | None, envs_idx: object):
        self.pos, self.quat = pos, quat
        self.style = (float(axis_length), float(axis_radius), origin_size)
        self.envs_idx = envs_idx
        self.markers: list[FrameMarker] = []
        self.envs = np.zeros(0, dtype=np.int64)
        self._origins, self._batched = np.zeros((0, 3)), False

    def materialize(self, client: int, origins: np.ndarray, envs: np.ndarray, batched: bool) -> None:
        """Create one marker per addressed environment (world origins (n_envs, 3)); ``batched``: the scene
        has an environment axis (else :meth:`pose` drops it)."""
        self._origins, self.envs, self._batched = origins, envs, batched
        pos, quat = self._per_env(self.pos, self.quat)
        length, radius, origin = self.style
        self.markers = [FrameMarker(client, origins[e] + pos[i], quat[i], length, radius,
                                    None if origin is None else origin / 2) for i, e in enumerate(envs)]

    def _per_env(self, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = len(self.envs)
        if pos.shape not in ((3,), (k, 3)) or quat.shape not in ((4,), (k, 4)):
            raise InputError(f"a debug frame drawn in {k} environments takes pos (3,) or ({k}, 3) and quat (4,) "
                             f"or ({k}, 4), got {pos.shape} and {quat.shape}")
        return np.broadcast_to(pos, (k, 3)), np.broadcast_to(quat, (k, 4))

    def set_pose(self, pos: object, quat: object = None) -> None:
        """Queue a pose in the environment frame: pos (3,) or (k, 3), quat wxyz (4,) or (k, 4) for its k envs."""
        self._queue(*pose_of(pos, quat))

    def set_T(self, T: object) -> None:
        """Queue a pose given as a 4x4 transform (4, 4) or (k, 4, 4)."""
        self._queue(*pose_of(T, None))

    def set_qpos(self, qpos: object) -> None:
        """Queue a pose as Genesis's free-body qpos (x, y, z, qw, qx, qy, qz): (7,) or (k, 7)."""
        q = as_vectors(qpos, "qpos", 7)
        self._queue(q[..., :3], as_quaternions(q[..., 3:], "qpos[3:7]"))

    def _queue(self, pos: np.ndarray, quat: np.ndarray) -> None:
        self.pos, self.quat = pos, quat_normalize(quat)
        if self.markers:
            pos, quat = self._per_env(pos, self.quat)
            for i, e in enumerate(self.envs):
                self.markers[i].set_pose(self._origins[e] + pos[i], quat[i])

    def apply(self) -> None:
        for marker in self.markers:
            marker.apply()

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Current poses in the environment frame: pos ([k,] 3), quat ([k,] 4) wxyz."""
        if not self.markers:
            raise AppError("this debug frame is not drawn yet: it appears when the scene is built (scene.build())")
        poses = [m.pose() for m in self.markers]
        pos = np.array([p for p, _ in poses]).reshape(-1, 3) - self._origins[self.envs]
        quat = np.array([q for _, q in poses]).reshape(-1, 4)
        return (pos, quat) if self._batched else (pos[0], quat[0])

    def remove(self) -> None:
        for marker in self.markers:
            marker.remove()
        self.markers = []
