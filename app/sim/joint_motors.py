"""Per-joint motor modes on one robot body: position, velocity, torque or brake, each DOF its own.

What a driver that commands joints one by one needs from PyBullet (app.trossen_arm's simulated controller):
``apply`` sets every DOF's motor for the next steps; ``read`` gives positions, velocities and the torques
the motors applied; ``gravity_torques`` the torques that hold the body still at q (inverse dynamics, zero
velocity and acceleration). Units: rad, rad/s, N m for revolute DOFs; m, m/s, N for prismatic ones.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import pybullet as pb

from app.errors import InputError
from app.sim.robot import Robot


class MotorKind(IntEnum):
    """What a DOF's motor does: brake (velocity 0 at full force), position / velocity targets, a torque."""

    BRAKE = 0
    POSITION = 1
    VELOCITY = 2
    TORQUE = 3


_BRAKE, _POSITION, _VELOCITY, _TORQUE = (int(k) for k in MotorKind)  # plain ints for the per-step code


class JointMotors:
    """The motors of ``robot``'s body in environment ``env``, DOFs in the model's order.

    Args:
        robot: A built app.sim Robot. env: Its environment index.
        position_gain: PyBullet's kp for position targets. velocity_gain: its kd (position and velocity modes).
    """

    def __init__(self, robot: Robot, env: int = 0, position_gain: float = 0.1, velocity_gain: float = 1.0):
        if not robot.bodies:
            raise InputError("JointMotors needs a built robot (scene.build, or robot.build)")
        self.client, self.body = robot.client, robot.bodies[env].body_id
        self.joints = [robot.bodies[env].joint_index[n] for n in robot.model.dof_names]
        effort = robot.model.effort_max
        self.force_max = np.where(np.isfinite(effort), effort, 1e3).astype(float)  # [N m] or [N]
        self.kp, self.kd = float(position_gain), float(velocity_gain)
        self._pb_order = np.argsort(self.joints)  # inverse dynamics takes the movable joints in PyBullet's order
        self.torque = np.zeros(len(self.joints))  # the torques of TORQUE DOFs as last applied

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, v, tau): positions, velocities, and the torques applied in the last step, each shape (n_dofs,);
        for TORQUE DOFs tau is the torque commanded."""
        states = pb.getJointStates(self.body, self.joints, physicsClientId=self.client)
        q = np.array([s[0] for s in states])
        v = np.array([s[1] for s in states])
        tau = np.array([s[3] for s in states])
        return q, v, tau

    def gravity_torques(self, q: np.ndarray) -> np.ndarray:
        """Torques [N m | N] that hold the body at q (n_dofs,) against gravity, at rest. Shape (n_dofs,)."""
        zeros = np.zeros(len(self.joints))
        return self.inverse_dynamics(q, zeros, zeros)

    def inverse_dynamics(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Torques [N m | N] that give the free body (no contacts) accelerations a at q, v (each (n_dofs,)):
        gravity, Coriolis and inertia. Shape (n_dofs,)."""
        order = self._pb_order
        rows = [np.asarray(x, dtype=float)[order].tolist() for x in (q, v, a)]
        tau_pb = pb.calculateInverseDynamics(self.body, *rows, physicsClientId=self.client)
        out = np.empty(len(order))
        out[order] = tau_pb
        return out

    def apply(self, kinds: np.ndarray, q_des: np.ndarray, v_des: np.ndarray, tau: np.ndarray,
              force: np.ndarray | None = None) -> None:
        """Set every DOF's motor until the next call. kinds: MotorKind per DOF; q_des [rad | m], v_des
        [rad/s | m/s], tau [N m | N]: shape (n_dofs,) each, read where the DOF's kind uses them (torques are
        clipped to the DOF's force limit). force: the most a POSITION or VELOCITY motor may push [N m | N]
        (n_dofs,), capped at the DOF's limit; None: the limit (a BRAKE always pushes up to it)."""
        kinds = np.asarray(kinds)
        cap = self.force_max if force is None else np.minimum(np.abs(np.asarray(force, float)), self.force_max)
        cap = np.where(kinds == _BRAKE, self.force_max, cap)
        tau = np.clip(np.asarray(tau, dtype=float), -self.force_max, self.force_max)
        self.torque = np.where(kinds == _TORQUE, tau, 0.0)
        pos = np.flatnonzero(kinds == _POSITION)
        if pos.size:
            self._send(pos, pb.POSITION_CONTROL, targetPositions=q_des[pos], targetVelocities=v_des[pos],
                       positionGains=[self.kp] * pos.size, velocityGains=[self.kd] * pos.size, forces=cap[pos])
        vel = np.flatnonzero((kinds == _VELOCITY) | (kinds == _BRAKE))
        if vel.size:
            v = np.where(kinds[vel] == _BRAKE, 0.0, v_des[vel])
            self._send(vel, pb.VELOCITY_CONTROL, targetVelocities=v, velocityGains=[self.kd] * vel.size,
                       forces=cap[vel])
        trq = np.flatnonzero(kinds == _TORQUE)
        if trq.size:  # the default velocity motor off, then the torque
            self._send(trq, pb.VELOCITY_CONTROL, targetVelocities=np.zeros(trq.size), forces=np.zeros(trq.size))
            self._send(trq, pb.TORQUE_CONTROL, forces=tau[trq])

    def _send(self, idx: np.ndarray, mode: int, **arrays) -> None:
        args = {k: np.asarray(v, dtype=float).tolist() for k, v in arrays.items()}
        args.setdefault("forces", self.force_max[idx].tolist())
        pb.setJointMotorControlArray(self.body, [self.joints[i] for i in idx], mode, physicsClientId=self.client,
                                     **args)
