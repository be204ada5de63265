"""The collision model's spheres drawn in the scene (GUI and rendered video: ``video.show_spheres``).

One visual-only body per link with primitives and environment: the link's spheres (and the boxes of links fixed
to the base) as a visual shape array, moved onto the link's pose with :meth:`SphereMarkers.update`.
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app.kinematics.rotations import matrix_to_quat, wxyz_to_xyzw

RGBA = (0.2, 0.65, 1.0, 0.45)


class SphereMarkers:
    """The spheres of ``robot`` (app.sim.robot.Robot, built) in every environment."""

    def __init__(self, robot, rgba=RGBA):
        self.robot = robot
        spheres = robot.sphere_model((), ()).robot  # the link primitives only (no pairs, no boxes of the scene)
        names = [n for n in robot.model.link_names if len(spheres.spheres.get(n, ())) or spheres.boxes.get(n)]
        self.links = np.array([robot.model.link_index(n) for n in names], dtype=np.int64)
        shapes = [self._shapes(spheres.spheres.get(n, np.zeros((0, 4))), spheres.boxes.get(n, []), rgba)
                  for n in names]  # made once, shared by every environment's bodies
        self.bodies = [[self._body(shape) for shape in shapes] for _ in range(robot.n_envs)]

    def _shapes(self, spheres: np.ndarray, boxes: list, rgba) -> list[tuple[int, list, list]]:
        """(visual shape, position, orientation xyzw) in the link frame per sphere and box."""
        client = self.robot.client
        out = [(pb.createVisualShape(pb.GEOM_SPHERE, radius=float(r), rgbaColor=rgba, physicsClientId=client),
                list(map(float, c)), [0.0, 0.0, 0.0, 1.0]) for *c, r in spheres]
        out += [(pb.createVisualShape(pb.GEOM_BOX, halfExtents=list(map(float, h)), rgbaColor=rgba,
                                      physicsClientId=client), list(map(float, p)),
                 wxyz_to_xyzw(matrix_to_quat(R)).tolist()) for R, p, h in boxes]
        return out

    def _body(self, shapes: list) -> int:
        """A visual-only body: an empty base and one fixed link per primitive (one multibody, moved at once)."""
        client, k = self.robot.client, len(shapes)
        body = pb.createMultiBody(
            baseMass=0, baseVisualShapeIndex=-1, basePosition=[0, 0, -10], linkMasses=[0.0] * k,
            linkCollisionShapeIndices=[-1] * k, linkVisualShapeIndices=[s for s, _, _ in shapes],
            linkPositions=[p for _, p, _ in shapes], linkOrientations=[o for _, _, o in shapes],
            linkInertialFramePositions=[[0, 0, 0]] * k, linkInertialFrameOrientations=[[0, 0, 0, 1]] * k,
            linkParentIndices=[0] * k, linkJointTypes=[pb.JOINT_FIXED] * k, linkJointAxis=[[0, 0, 1]] * k,
            physicsClientId=client)
        for link in range(-1, k):  # purely visual: never collides
            pb.setCollisionFilterGroupMask(body, link, 0, 0, physicsClientId=client)
        return body

    def update(self, q: np.ndarray) -> None:
        """Every environment's spheres onto the links at q (n_envs, n_dofs)."""
        R_wb, origins = self.robot.world_base_frames()
        R, p = self.robot.model.link_frames(np.asarray(q, dtype=float).reshape(self.robot.n_envs, -1))
        for env, bodies in enumerate(self.bodies):
            for body, link in zip(bodies, self.links):
                pos = origins[env] + R_wb @ p[env, link]
                quat = wxyz_to_xyzw(matrix_to_quat(R_wb @ R[env, link]))
                pb.resetBasePositionAndOrientation(body, pos.tolist(), quat.tolist(), physicsClientId=self.robot.client)
