"""Target frames that show in GUI windows and in getCameraImage (debug lines do not).

Each frame is a visual-only multibody (mass 0, no collision shape): a small base sphere and
three fixed child links carrying red, green and blue cylinders along x, y and z.
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app.kinematics.rotations import wxyz_to_xyzw

_AXES = (  # (colour, cylinder orientation xyzw turning its z onto the axis, offset direction)
    ((0.9, 0.1, 0.1, 1.0), (0.0, 0.7071067811865476, 0.0, 0.7071067811865476), (1.0, 0.0, 0.0)),
    ((0.1, 0.8, 0.1, 1.0), (-0.7071067811865476, 0.0, 0.0, 0.7071067811865476), (0.0, 1.0, 0.0)),
    ((0.1, 0.3, 0.95, 1.0), (0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),
)


class FrameMarker:
    """A coordinate frame drawn in the scene; move it with :meth:`set_pose`.

    Args:
        client: PyBullet client id.
        pos, quat: Initial pose, world frame; quat is (w, x, y, z).
        axis_length: Length of each axis [m]. radius: Cylinder radius [m].
    """

    def __init__(self, client: int, pos, quat, axis_length: float = 0.1, radius: float = 0.004,
                 origin_radius: float | None = None):
        self.client = client
        self._pending: tuple | None = None
        shapes = [pb.createVisualShape(pb.GEOM_CYLINDER, radius=radius, length=axis_length, rgbaColor=rgba,
                                       visualFramePosition=[axis_length / 2 * v for v in vec],
                                       visualFrameOrientation=orn, physicsClientId=client)
                  for rgba, orn, vec in _AXES]
        hub = pb.createVisualShape(pb.GEOM_SPHERE, radius=1.8 * radius if origin_radius is None else origin_radius,
                                   rgbaColor=(0.95, 0.95, 0.95, 1),
                                   physicsClientId=client)
        self.body_id = pb.createMultiBody(
            baseMass=0, baseVisualShapeIndex=hub, basePosition=list(map(float, pos)),
            baseOrientation=wxyz_to_xyzw(np.asarray(quat, dtype=float)).tolist(),
            linkMasses=[0.0] * 3, linkCollisionShapeIndices=[-1] * 3, linkVisualShapeIndices=shapes,
            linkPositions=[[0, 0, 0]] * 3, linkOrientations=[[0, 0, 0, 1]] * 3,
            linkInertialFramePositions=[[0, 0, 0]] * 3, linkInertialFrameOrientations=[[0, 0, 0, 1]] * 3,
            linkParentIndices=[0] * 3, linkJointTypes=[pb.JOINT_FIXED] * 3, linkJointAxis=[[0, 0, 1]] * 3,
            physicsClientId=client)
        for link in range(-1, 3):  # purely visual: never collides
            pb.setCollisionFilterGroupMask(self.body_id, link, 0, 0, physicsClientId=client)

    def set_pose(self, pos, quat) -> None:
        """Queue a new pose (world frame, quat wxyz); applied by :meth:`apply` (scene.update_debug_objects)."""
        self._pending = (list(map(float, pos)), wxyz_to_xyzw(np.asarray(quat, dtype=float)).tolist())

    def apply(self) -> None:
        if self._pending is not None:
            pb.resetBasePositionAndOrientation(self.body_id, *self._pending, physicsClientId=self.client)
            self._pending = None

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Current (pos, quat wxyz) in the world frame."""
        pos, orn = pb.getBasePositionAndOrientation(self.body_id, physicsClientId=self.client)
        return np.array(pos), np.array([orn[3], orn[0], orn[1], orn[2]])

    def remove(self) -> None:
        """Delete the marker's body."""
        if pb.isConnected(self.client):
            pb.removeBody(self.body_id, physicsClientId=self.client)


class DiscMarker:
    """A flat disc lying on a surface, visual only (mass 0, never collides): a goal the cameras see, such as a
    pick's place target. ``radius`` [m], ``thickness`` [m], ``rgba`` in [0, 1]; move it with :meth:`place`."""

    def __init__(self, client: int, radius: float, thickness: float = 0.001, rgba=(0.1, 0.75, 0.2, 1.0)):
        self.client = client
        shape = pb.createVisualShape(pb.GEOM_CYLINDER, radius=radius, length=thickness, rgbaColor=list(rgba),
                                     physicsClientId=client)
        self.body_id = pb.createMultiBody(baseMass=0, baseVisualShapeIndex=shape, basePosition=[0, 0, -10],
                                          physicsClientId=client)
        pb.setCollisionFilterGroupMask(self.body_id, -1, 0, 0, physicsClientId=client)
        self.thickness = thickness

    def place(self, pos_world) -> None:
        """The disc's bottom face centred on ``pos_world`` (3,) [m], world frame, lying flat."""
        x, y, z = map(float, pos_world)
        pb.resetBasePositionAndOrientation(self.body_id, [x, y, z + self.thickness / 2], [0, 0, 0, 1],
                                           physicsClientId=self.client)
