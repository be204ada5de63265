"""Dynamic rigid bodies (cubes, cylinders, spheres, URDF or mesh files), one copy per environment.

Poses are in each environment's own frame (Genesis's meaning); PyBullet's (x, y, z, w) quaternions are
converted here. The simulator moves them: after the run starts nothing here resets an object's pose or
velocity (``set_pose`` is for placing them before the run, or by a user between episodes).
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app.errors import AppError, InputError
from app.kinematics.rotations import wxyz_to_xyzw, xyzw_to_wxyz
from app.sim.env_frames import EnvRows, as_indices
from app.specs import ObjectSpec
from app.validation import MAX_MAGNITUDE, as_quaternions


class SceneObject:
    """One declared object and its bodies (one per environment, created by ``scene.build``)."""

    def __init__(self, client: int, spec: ObjectSpec):
        self.client, self.spec, self.name = client, spec, spec.name
        self.body_ids: list[int] = []
        self.batched = False
        self.closed = False  # set by scene.close()

    def build(self, env_origins: np.ndarray, batched: bool) -> None:
        self.env_origins, self.batched = np.asarray(env_origins, dtype=float), batched
        self.body_ids = [self._create(origin) for origin in self.env_origins]

    def _create(self, origin: np.ndarray) -> int:
        s, c = self.spec, self.client
        pos, quat = (origin + np.asarray(s.pos)).tolist(), wxyz_to_xyzw(np.asarray(s.start_quat(), dtype=float)).tolist()
        try:
            if s.shape == "urdf":
                body = pb.loadURDF(s.file, pos, quat, globalScaling=s.scale, physicsClientId=c)
            else:
                col, vis = _shapes(c, s)
                body = pb.createMultiBody(s.mass, col, vis, pos, quat, physicsClientId=c)
        except pb.error as exc:  # a file PyBullet cannot load: "createCollisionShape failed", ...
            raise InputError(f"object {s.name!r}: PyBullet cannot load its {s.shape} file {s.file} ({exc}); give "
                             "a valid URDF, or an STL/OBJ mesh") from None
        if s.shape != "urdf":
            pb.changeDynamics(body, -1, mass=s.mass, physicsClientId=c)
        pb.changeDynamics(body, -1, lateralFriction=s.friction, spinningFriction=s.spinning_friction,
                          rollingFriction=s.rolling_friction, physicsClientId=c)
        return body

    def _require_open(self) -> None:
        if self.closed:
            raise AppError(f"object {self.name!r}: the scene is closed (scene.close() was called): build a new Scene")

    def envs(self, envs_idx: object) -> EnvRows:
        self._require_open()
        if not self.body_ids:
            raise InputError(f"object {self.name!r} has no bodies yet: call scene.build() first")
        return EnvRows(as_indices(envs_idx, "envs_idx", len(self.body_ids), "environments"), self.batched)

    def poses(self) -> tuple[np.ndarray, np.ndarray]:
        """Every environment's pose: pos (n_envs, 3) [m], quat (n_envs, 4) wxyz, environment frames."""
        self._require_open()
        states = [pb.getBasePositionAndOrientation(b, physicsClientId=self.client) for b in self.body_ids]
        pos = np.array([s[0] for s in states]) - self.env_origins
        return pos, xyzw_to_wxyz(np.array([s[1] for s in states]))

    def velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """Linear (n_envs, 3) [m/s] and angular (n_envs, 3) [rad/s] velocities, world axes."""
        self._require_open()
        states = [pb.getBaseVelocity(b, physicsClientId=self.client) for b in self.body_ids]
        return np.array([s[0] for s in states]), np.array([s[1] for s in states])

    def get_pos(self, envs_idx: object = None) -> np.ndarray:
        """Positions ([n_envs,] 3) [m] in each environment's frame (Genesis's ``get_pos``)."""
        envs = self.envs(envs_idx)
        return envs.out(self.poses()[0][envs.idx])

    def get_quat(self, envs_idx: object = None) -> np.ndarray:
        """Orientations ([n_envs,] 4) wxyz (Genesis's ``get_quat``)."""
        envs = self.envs(envs_idx)
        return envs.out(self.poses()[1][envs.idx])

    def set_pose(self, pos: object, quat: object = None, envs_idx: object = None) -> None:
        """Place the addressed environments' copies at pos ([n_envs,] 3), quat ([n_envs,] 4) wxyz, at rest."""
        envs = self.envs(envs_idx)
        p = envs.rows(pos, "pos", 3)
        if np.abs(p).max(initial=0.0) > MAX_MAGNITUDE:
            raise InputError(f"object {self.name!r}: pos must be within +-{MAX_MAGNITUDE:g} m, got {p.tolist()!r:.80}")
        q = np.broadcast_to(self.spec.start_quat(), (len(envs.idx), 4)) if quat is None else \
            as_quaternions(envs.rows(quat, "quat", 4), "quat")
        for row, e in enumerate(envs.idx):
            body = self.body_ids[e]
            pb.resetBasePositionAndOrientation(body, (self.env_origins[e] + p[row]).tolist(),
                                               wxyz_to_xyzw(np.asarray(q[row])).tolist(), physicsClientId=self.client)
            pb.resetBaseVelocity(body, [0, 0, 0], [0, 0, 0], physicsClientId=self.client)


def _shapes(client: int, s: ObjectSpec) -> tuple[int, int]:
    """(collision, visual) shape ids of a primitive or mesh object."""
    if s.shape == "mesh":
        scale = [s.scale] * 3
        return (pb.createCollisionShape(pb.GEOM_MESH, fileName=s.file, meshScale=scale, physicsClientId=client),
                pb.createVisualShape(pb.GEOM_MESH, fileName=s.file, meshScale=scale, rgbaColor=s.rgba,
                                     physicsClientId=client))
    if s.shape == "box":
        half = (np.asarray(s.size) / 2).tolist()
        return (pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=client),
                pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=s.rgba, physicsClientId=client))
    if s.shape == "cylinder":
        return (pb.createCollisionShape(pb.GEOM_CYLINDER, radius=s.radius, height=s.height, physicsClientId=client),
                pb.createVisualShape(pb.GEOM_CYLINDER, radius=s.radius, length=s.height, rgbaColor=s.rgba,
                                     physicsClientId=client))
    return (pb.createCollisionShape(pb.GEOM_SPHERE, radius=s.radius, physicsClientId=client),
            pb.createVisualShape(pb.GEOM_SPHERE, radius=s.radius, rgbaColor=s.rgba, physicsClientId=client))
