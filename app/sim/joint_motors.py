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
        self._fmax = self.force_max.tolist()
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
        kinds = [int(k) for k in kinds]  # a handful of DOFs: plain lists beat numpy's per-call cost here
        q_des, v_des = np.asarray(q_des, float).tolist(), np.asarray(v_des, float).tolist()
        fmax = self._fmax
        cap = fmax if force is None else [min(abs(f), m) for f, m in zip(np.asarray(force, float).tolist(), fmax)]
        tau = [min(max(x, -m), m) for x, m in zip(np.asarray(tau, float).tolist(), fmax)]
        groups: dict[int, list[int]] = {_POSITION: [], _VELOCITY: [], _TORQUE: []}
        for i, k in enumerate(kinds):
            groups[_VELOCITY if k == _BRAKE else k].append(i)
        self.torque = np.array([tau[i] if k == _TORQUE else 0.0 for i, k in enumerate(kinds)])
        if pos := groups[_POSITION]:
            self._send(pos, pb.POSITION_CONTROL, targetPositions=[q_des[i] for i in pos],
                       targetVelocities=[v_des[i] for i in pos], positionGains=[self.kp] * len(pos),
                       velocityGains=[self.kd] * len(pos), forces=[cap[i] for i in pos])
        if vel := groups[_VELOCITY]:
            self._send(vel, pb.VELOCITY_CONTROL, velocityGains=[self.kd] * len(vel),
                       targetVelocities=[0.0 if kinds[i] == _BRAKE else v_des[i] for i in vel],
                       forces=[fmax[i] if kinds[i] == _BRAKE else cap[i] for i in vel])
        if trq := groups[_TORQUE]:  # the default velocity motor off, then the torque
            self._send(trq, pb.VELOCITY_CONTROL, targetVelocities=[0.0] * len(trq), forces=[0.0] * len(trq))
            self._send(trq, pb.TORQUE_CONTROL, forces=[tau[i] for i in trq])

    def _send(self, idx: list[int], mode: int, **lists) -> None:
        pb.setJointMotorControlArray(self.body, [self.joints[i] for i in idx], mode, physicsClientId=self.client,
                                     **lists)
