"""The Genesis-style robot on PyBullet: state, motors, world-frame FK/Jacobian/IK per environment.

Every array has a leading ``n_envs`` axis when the scene was built with ``n_envs``; without it
the axis is dropped (one environment). World-frame targets are turned into the model's base
frame here, and PyBullet's (x, y, z, w) quaternions are converted at this edge only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pybullet as pb

from app.errors import AppError, InputError
from app.kinematics.model import RobotModel
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix
from app.sim.loader import LoadedBody, load_urdf
from app.validation import as_quaternions, as_vectors

if TYPE_CHECKING:
    from app.sim.scene import Scene


@dataclass(frozen=True)
class Link:
    """A link of a robot: its name and index in the model."""

    name: str
    idx: int


class Robot:
    """A URDF robot, one body per environment (created by ``scene.build``)."""

    def __init__(self, scene: Scene, urdf: str, base_pos, base_quat, package_dirs: Sequence[str] | None):
        self.scene = scene
        self.urdf, self.package_dirs = urdf, list(package_dirs or [])
        self.model = RobotModel.from_urdf(urdf)
        self.base_pos = as_vectors(base_pos, "base_pos", 3)
        self.R_world_base = quat_to_matrix(as_quaternions(base_quat, "base_quat"))
        self.base_quat = matrix_to_quat(self.R_world_base)
        self.bodies: list[LoadedBody] = []
        self.position_gain = 0.1  # PyBullet motor kp for absolute position targets
        self.env_origins = np.zeros((1, 3))

    # ------------------------------------------------------------------ building and names
    def build(self, env_origins: np.ndarray) -> None:
        """Load one body per environment origin and hold it at the mid-point of its limits."""
        self.env_origins = env_origins
        self.bodies = [load_urdf(self.scene.client, self.urdf, self.package_dirs, origin + self.base_pos,
                                 self.base_quat) for origin in env_origins]
        self._joints = [self.bodies[0].joint_index[n] for n in self.model.dof_names]
        self.pb_to_model_link = {pb_idx: self.model.link_index(name)  # PyBullet link index -> model link
                                 for name, pb_idx in self.bodies[0].link_index.items()}
        self.movable_pb_links = frozenset(pb_idx for pb_idx, link in self.pb_to_model_link.items()
                                          if self.model.movable_links[link])  # PyBullet indices some DOF moves
        self.set_qpos(np.broadcast_to(self.model.mid_config(), self._batch_shape() + (self.n_dofs,)))

    @property
    def n_dofs(self) -> int:
        return self.model.n_dofs

    @property
    def n_envs(self) -> int:
        return len(self.bodies)

    @property
    def batched(self) -> bool:
        return self.scene.n_envs is not None

    def _batch_shape(self) -> tuple[int, ...]:
        return (self.n_envs,) if self.batched else ()

    def get_link(self, name: str) -> Link:
        """The link called ``name``; UnknownNameError lists the valid names."""
        return Link(name, self.model.link_index(name))

    def _require_built(self) -> None:
        if not self.bodies:
            raise AppError("the robot has no bodies yet: call scene.build() first")

    def _envs(self, envs_idx) -> np.ndarray:
        idx = np.arange(self.n_envs) if envs_idx is None else np.atleast_1d(np.asarray(envs_idx))
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_envs):
            raise InputError(f"envs_idx {idx.tolist()} out of range 0..{self.n_envs - 1}")
        return idx

    def _batched_q(self, q: object, name: str) -> np.ndarray:
        """q of shape ([n_envs,] n_dofs) as (n_envs, n_dofs)."""
        q = self.model.check_q(q, name)
        expected = self._batch_shape() + (self.n_dofs,)
        if q.shape != expected:
            raise InputError(f"{name} must have shape {expected}, got {q.shape}")
        return q.reshape(self.n_envs, self.n_dofs)

    def unbatch(self, arr: np.ndarray) -> np.ndarray:
        """Drop the leading environment axis of ``arr`` (n_envs, ...) when the scene is unbatched."""
        return arr if self.batched else arr[0]

    # ------------------------------------------------------------------ state and motors
    def get_qpos(self) -> np.ndarray:
        """Joint positions. Shape ([n_envs,] n_dofs)."""
        return self.unbatch(self.read_states()[0])

    def get_dofs_velocity(self) -> np.ndarray:
        """Joint velocities. Shape ([n_envs,] n_dofs)."""
        return self.unbatch(self.read_states()[1])

    def read_states(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities, always batched. Shapes (n_envs, n_dofs) each."""
        self._require_built()
        states = [pb.getJointStates(b.body_id, self._joints, physicsClientId=self.scene.client) for b in self.bodies]
        q = np.array([[s[0] for s in env] for env in states])
        v = np.array([[s[1] for s in env] for env in states])
        return q, v

    def set_qpos(self, q: object) -> None:
        """Teleport the joints (no physics) and zero their velocities. q ([n_envs,] n_dofs)."""
        self._require_built()
        for body, q_env in zip(self.bodies, self._batched_q(q, "qpos")):
            for j, value in zip(self._joints, q_env):
                pb.resetJointState(body.body_id, j, float(value), 0.0, physicsClientId=self.scene.client)

    set_dofs_position = set_qpos

    def control_dofs_position(self, q: object, qdot: object | None = None, position_gain: float | None = None,
                              velocity_gain: float = 1.0) -> None:
        """Position targets for the motors (setJointMotorControlArray), forces capped at the URDF efforts.

        PyBullet's motor asks for the joint velocity kp (q_target - q)/dt + v + kd (v_target - v).

        Args:
            q: Target positions. Shape ([n_envs,] n_dofs).
            qdot: Target velocities (feed-forward). Shape ([n_envs,] n_dofs); zeros if None.
            position_gain: kp; default ``self.position_gain``. velocity_gain: kd.
        """
        kp = self.position_gain if position_gain is None else position_gain
        self._require_built()
        q_b = self._batched_q(q, "q")
        v_b = np.zeros_like(q_b) if qdot is None else self._batched_q(qdot, "qdot")
        forces = np.where(np.isfinite(self.model.effort_max), self.model.effort_max, 1e3).tolist()
        for body, q_env, v_env in zip(self.bodies, q_b, v_b):
            pb.setJointMotorControlArray(body.body_id, self._joints, pb.POSITION_CONTROL,
                                         targetPositions=q_env.tolist(), targetVelocities=v_env.tolist(),
                                         forces=forces, positionGains=[kp] * len(forces),
                                         velocityGains=[velocity_gain] * len(forces),
                                         physicsClientId=self.scene.client)

    # ------------------------------------------------------------------ frames
    def base_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """World rotation (3, 3) and base origins (n_envs, 3)."""
        return self.R_world_base, self.env_origins + self.base_pos

    def to_base(self, pos: np.ndarray, quat: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """World-frame targets (n_envs, 3), (n_envs, 4) -> the model's base frame."""
        R, origins = self.base_frames()
        pos_b = (pos - origins) @ R
        quat_b = None if quat is None else matrix_to_quat(R.T @ quat_to_matrix(quat))
        return pos_b, quat_b

    def forward_kinematics(self, qpos: object, links_idx_local: Sequence[int] | None = None,
                           envs_idx: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World-frame link poses for ``qpos`` ([n_envs,] n_dofs); works without any IK call first.

        Returns:
            (links_pos ([n,] n_links, 3), links_quat ([n,] n_links, 4) wxyz).
        """
        self._require_built()
        envs = self._envs(envs_idx)
        q = self.model.check_q(qpos, "qpos")
        q = q.reshape(-1, self.n_dofs) if q.ndim > 1 else np.broadcast_to(q, (len(envs), self.n_dofs))
        if len(q) != len(envs):
            raise InputError(f"qpos has {len(q)} rows for {len(envs)} environments")
        links = None if links_idx_local is None else list(links_idx_local)
        pos, quat = self.model.forward_kinematics(q, links)
        R, origins = self.base_frames()
        pos = pos @ R.T + origins[envs, None, :]
        quat = matrix_to_quat(R @ quat_to_matrix(quat))
        return (pos, quat) if (self.batched or envs_idx is not None) else (pos[0], quat[0])

    def get_jacobian(self, link: Link | str, local_point: object | None = None) -> np.ndarray:
        """World-frame geometric Jacobian at the current state. Shape ([n_envs,] 6, n_dofs)."""
        name = link.name if isinstance(link, Link) else link
        J = self.model.get_jacobian(self.read_states()[0], name, local_point)
        R = self.R_world_base
        J = np.concatenate([R @ J[:, :3], R @ J[:, 3:]], axis=1)
        return self.unbatch(J)

    # ------------------------------------------------------------------ inverse kinematics
    def inverse_kinematics(self, link: Link | str, pos: object = None, quat: object = None, **kwargs):
        """World-frame pose IK for every environment (see RobotModel.inverse_kinematics).

        ``pos`` ([n_envs,] 3) and ``quat`` ([n_envs,] 4) are world-frame targets; ``init_qpos``
        defaults to the current joint positions.
        """
        return self.inverse_kinematics_multilink([link], [pos], [quat], _single=True, **kwargs)

    def inverse_kinematics_multilink(self, links: Sequence[Link | str], poss: Sequence, quats: Sequence | None = None,
                                     _single: bool = False, **kwargs):
        """World-frame multi-link IK for every environment (see RobotModel.inverse_kinematics_multilink)."""
        self._require_built()
        names = [l.name if isinstance(l, Link) else l for l in links]
        quats = [None] * len(names) if quats is None else list(quats)
        if len(poss) != len(names) or len(quats) != len(names):
            raise InputError(f"links, poss and quats must have the same length, got {len(names)}, {len(poss)}, {len(quats)}")
        shape = self._batch_shape()
        poss_b, quats_b = [], []
        for i, (p, q) in enumerate(zip(poss, quats)):
            p = None if p is None else np.broadcast_to(as_vectors(p, f"poss[{i}]", 3), shape + (3,))
            q = None if q is None else np.broadcast_to(as_quaternions(q, f"quats[{i}]"), shape + (4,))
            p_b, q_b = self.to_base(np.zeros((self.n_envs, 3)) if p is None else p.reshape(-1, 3),
                                    None if q is None else q.reshape(-1, 4))
            poss_b.append(None if p is None else self.unbatch(p_b))
            quats_b.append(None if q_b is None else self.unbatch(q_b))
        kwargs.setdefault("init_qpos", self.get_qpos())
        if _single:
            return self.model.inverse_kinematics(names[0], poss_b[0], quats_b[0], **kwargs)
        return self.model.inverse_kinematics_multilink(names, poss_b, quats_b, **kwargs)
