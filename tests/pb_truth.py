"""Independent truth from PyBullet: link frames and Jacobians of a loaded body."""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app import RobotModel
from app.kinematics.rotations import quat_to_matrix, xyzw_to_wxyz
from app.sim.urdf_loader import LoadedBody


def set_config(client: int, body: LoadedBody, model: RobotModel, q: np.ndarray) -> None:
    for name, value in zip(model.dof_names, q):
        pb.resetJointState(body.body_id, body.joint_index[name], float(value), physicsClientId=client)


def link_frame(client: int, body: LoadedBody, link: str) -> tuple[np.ndarray, np.ndarray]:
    """World position (3,) and rotation (3, 3) of a URDF link frame (not its inertial frame)."""
    idx = body.link_index[link]
    if idx == -1:
        pos, quat = pb.getBasePositionAndOrientation(body.body_id, physicsClientId=client)
        # the base's reported pose is its inertial frame; the loaders here use identity base inertia offsets
        return np.array(pos), quat_to_matrix(xyzw_to_wxyz(quat))
    state = pb.getLinkState(body.body_id, idx, computeForwardKinematics=True, physicsClientId=client)
    return np.array(state[4]), quat_to_matrix(xyzw_to_wxyz(state[5]))


def jacobian(client: int, body: LoadedBody, model: RobotModel, q: np.ndarray, link: str,
             local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """PyBullet's Jacobian at a point given in the link frame, columns in the model's DOF order. Shape (6, n_dofs)."""
    set_config(client, body, model, q)
    idx = body.link_index[link]
    # Measured on pybullet 3.2.7: localPosition is taken in the URDF link frame, although the
    # documentation speaks of the centre of mass (a point at 0 is on the joint axis of the link's joint).
    joint_order = sorted(body.joint_index, key=body.joint_index.get)
    q_pb = [float(q[model.dof_names.index(n)]) for n in joint_order]
    lin, ang = pb.calculateJacobian(body.body_id, idx, [float(v) for v in local_point], q_pb, [0.0] * len(q_pb),
                                    [0.0] * len(q_pb), physicsClientId=client)
    J_pb = np.vstack([np.array(lin), np.array(ang)])
    cols = [joint_order.index(n) for n in model.dof_names]
    return J_pb[:, cols]
