"""The gripper: finger joints driven by their own motors (setJointMotorControlArray), holding objects by
contact friction only (no constraint to the object, nothing reset while it is handled).

Each finger joint is one side of the grip; the links it moves (and their descendants) are that side's
finger. A command is a closing fraction per environment (0 open, 1 closed); each tick the fingers move
towards it at no more than their URDF velocity bound, force-capped at ``force``: blocked by an object, a
finger presses on it with that force.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pybullet as pb

from app.errors import InputError
from app.ik.limits.joint_box import LIMIT_MARGIN
from app.kinematics.rotations import axis_vector
from app.specs import GripperSpec

RAY_DEPTHS = (0.005, 0.01, 0.02)  # [m] behind the end-effector point, where the open gap is measured
APPROACH_GAIN = 20.0  # [1/s]: finger velocity = gain * (target - q), capped at the URDF bound


class GripperState(NamedTuple):
    """closing (n_envs,): 0 open .. 1 closed, measured; contact (n_envs, n_sides): each finger touches the
    watched body."""

    closing: np.ndarray
    contact: np.ndarray


class Gripper:
    """The fingers of one scene robot (``robot`` is app.sim.robot.Robot, built)."""

    def __init__(self, robot, spec: GripperSpec):
        """``spec`` checked against the robot's model (app.validation.check_spec)."""
        m = robot.model
        self.robot, self.spec = robot, spec
        self.dofs = np.array([m.dof_index(j) for j in spec.joints])
        self.open = _values(spec.open, m.q_upper[self.dofs], len(spec.joints))
        self.closed = _values(spec.closed, m.q_lower[self.dofs], len(spec.joints))
        lo, hi = m.q_lower[self.dofs], m.q_upper[self.dofs]
        self._lo, self._hi = lo + LIMIT_MARGIN, hi - LIMIT_MARGIN
        self.v_max = m.v_max[self.dofs]
        self.sides = [m.links_moved_by(k) for k in self.dofs]  # model link indices of each finger
        if len(self.sides) == 1:  # one moving finger against a fixed jaw: the link it is mounted on
            self.sides.append(np.array([m.link_index(m.spec.joints[self._joint_idx(spec.joints[0])].parent)]))
        self.links = np.unique(np.concatenate(self.sides))  # every finger link (model indices)
        to_pb = {v: k for k, v in robot.pb_to_model_link.items()}
        self._pb_sides = [frozenset(to_pb[i] for i in side) for side in self.sides]
        self.pb_links = frozenset().union(*self._pb_sides)
        self._joints = [robot._joints[k] for k in self.dofs]
        self._tied = bool(spec.mimic and len(self._joints) == 2)
        self.target = np.zeros(robot.n_envs)  # closing fraction commanded
        for body in robot.bodies:
            for link in self.pb_links:
                pb.changeDynamics(body.body_id, link, lateralFriction=spec.friction, physicsClientId=robot.client)
        if self._tied:
            self._tie_fingers()
        self.max_opening = self._measure_opening()

    def _tie_fingers(self) -> None:
        """A gear constraint per environment between the two finger joints: q_a = q_b (both open alike)."""
        r, (a, b) = self.robot, self._joints
        span = self.open - self.closed
        for body in r.bodies:
            c = pb.createConstraint(body.body_id, a, body.body_id, b, pb.JOINT_GEAR, [0, 1, 0], [0, 0, 0], [0, 0, 0],
                                    physicsClientId=r.client)
            pb.changeConstraint(c, gearRatio=-float(span[0] / span[1]) if span[1] else -1.0, erp=0.2,
                                maxForce=4 * float(self.spec.force), physicsClientId=r.client)

    def _joint_idx(self, name: str) -> int:
        return [j.name for j in self.robot.model.spec.joints].index(name)

    def _measure_opening(self) -> float:
        """The gap [m] between the open fingers where an object sits (environment 0, fingers set open, then put
        back): rays from points RAY_DEPTHS behind the end-effector point along +-closing_axis to each finger,
        the narrowest sum; without ``ee_link``, the closest points of the two fingers' collision shapes."""
        r = self.robot
        body = r.bodies[0].body_id
        q_before = r.read_states()[0][0, self.dofs]
        for j, v in zip(self._joints, self.open):
            pb.resetJointState(body, j, float(v), 0.0, physicsClientId=r.client)
        try:
            if self.spec.ee_link is not None:
                return self._ray_gap(body)
            d = [pt[8] for a in self._pb_sides[0] for b in self._pb_sides[1]
                 for pt in pb.getClosestPoints(body, body, 1.0, a, b, physicsClientId=r.client)]
            return float(min(d)) if d else float("inf")
        finally:
            for j, v in zip(self._joints, q_before):
                pb.resetJointState(body, j, float(v), 0.0, physicsClientId=r.client)
            r.forget_states()

    def _ray_gap(self, body: int, length: float = 0.3) -> float:
        client = self.robot.client
        link = self.robot.bodies[0].link_index[self.spec.ee_link]
        state = pb.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=client)
        p, R = np.array(state[4]), np.array(pb.getMatrixFromQuaternion(state[5])).reshape(3, 3)
        a, c = R @ axis_vector(self.spec.approach_axis), R @ axis_vector(self.spec.closing_axis)
        starts = [p - d * a for d in RAY_DEPTHS]
        froms = [s.tolist() for s in starts for _ in (0, 1)]
        tos = [(s + sign * length * c).tolist() for s in starts for sign in (1.0, -1.0)]
        hits = pb.rayTestBatch(froms, tos, physicsClientId=client)
        gaps = []
        for k in range(len(starts)):
            up, down = hits[2 * k], hits[2 * k + 1]
            if all(h[0] == body and h[1] in self.pb_links for h in (up, down)):
                gaps.append((up[2] + down[2]) * length)
        return float(min(gaps)) if gaps else float("inf")

    def command(self, closing: np.ndarray, q: np.ndarray, dt: float) -> None:
        """Move every environment's fingers towards ``closing`` (n_envs,) in [0, 1] from the measured joints
        q (n_envs, n_dofs), over a control tick dt [s]."""
        closing = np.asarray(closing, dtype=float)
        if closing.shape != (len(self.robot.bodies),) or not np.isfinite(closing).all():
            raise InputError(f"gripper closing must be {len(self.robot.bodies)} finite fraction(s) (one per "
                             f"environment; 0 open .. 1 closed), got {closing.tolist()}")
        self.target = np.clip(closing, 0.0, 1.0)
        fingers = q[:, self.dofs]
        qdot = APPROACH_GAIN * (self._goals(self.target) - fingers)
        if self._tied:
            outside = ((fingers < self._lo) | (fingers > self._hi)).any(axis=1)
            qdot = np.where(outside[:, None], self._back_inside(fingers, qdot), qdot)
        qdot = np.clip(qdot, -self.v_max, self.v_max)
        r, force = self.robot, [float(self.spec.force)] * len(self._joints)
        for e, body in enumerate(r.bodies):
            pb.setJointMotorControlArray(body.body_id, self._joints, pb.VELOCITY_CONTROL,
                                         targetVelocities=qdot[e].tolist(), forces=force, physicsClientId=r.client)

    def _back_inside(self, fingers: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """Velocities (n_envs, 2) for tied fingers with one outside its margin window: both at one closing rate,
        as the gear ties them: the command's mean, or the rate that brings the worst finger back inside where
        the mean would not.

        The gear ties the fingers' velocities, not the offset a one-sided grasp leaves between them, so one
        finger can reach its goal with the other past its own; two motors driving towards their own goals then
        cancel through the gear (velocity motors meet half-way at any force bound) and leave that finger past
        its limit."""
        span = self.closed - self.open
        span = np.where(np.abs(span) > 1e-12, span, 1.0)
        c, c_a, c_b = ((x - self.open) / span for x in (fingers, self._lo, self._hi))
        c_min, c_max = np.minimum(c_a, c_b), np.maximum(c_a, c_b)
        need = np.max(np.maximum(c_min - c, 0.0), axis=1) - np.max(np.maximum(c - c_max, 0.0), axis=1)
        need, rate = APPROACH_GAIN * need, np.mean(qdot / span, axis=1)  # closing rates [1/s]
        shared = np.where(need > 0.0, np.maximum(need, rate), np.minimum(need, rate))  # inwards at least by need
        return shared[:, None] * span

    def finger_goal(self) -> np.ndarray:
        """Where the last command drives the fingers: their mean goal position (n_envs,) [m or rad] (a dataset's
        gripper action: the command, which closes past an object it grips, not where the fingers stopped)."""
        goal = self._goals(np.asarray(self.target, dtype=float).reshape(-1))
        return np.broadcast_to(goal.mean(axis=1), (self.robot.n_envs,)).copy()

    def _goals(self, closing: np.ndarray) -> np.ndarray:
        """Each finger's goal (n, n_fingers) for closing fractions (n,), a margin inside its limits."""
        return np.clip(self.open + closing[:, None] * (self.closed - self.open), self._lo, self._hi)

    def closing_of(self, fingers: np.ndarray) -> np.ndarray:
        """Closing fractions (n,) of finger positions (n, n_fingers), or (n, 1): one position for every finger
        (0 open .. 1 closed; not clipped)."""
        span = self.closed - self.open
        span = np.where(np.abs(span) > 1e-12, span, 1.0)
        return np.mean((np.asarray(fingers, dtype=float) - self.open) / span, axis=1)

    def finger_of(self, closing: np.ndarray) -> np.ndarray:
        """The mean finger position (n,) of closing fractions (n,) (not clipped: the inverse of closing_of)."""
        return np.mean(self.open + np.asarray(closing, dtype=float)[:, None] * (self.closed - self.open), axis=1)

    def state(self, q: np.ndarray, touching: list[set[int]] | None = None) -> GripperState:
        """The measured grip from joints q (n_envs, n_dofs); ``touching``: per environment, the robot's
        PyBullet links that touch the watched body (Robot.contact_links), None for no body watched."""
        closing = self.closing_of(q[:, self.dofs])
        contact = np.zeros((len(q), len(self._pb_sides)), dtype=bool)
        for e, links in enumerate(touching or []):
            contact[e] = [bool(links & side) for side in self._pb_sides]
        return GripperState(closing, contact)


def _values(given: tuple[float, ...] | None, default: np.ndarray, n_joints: int) -> np.ndarray:
    """One value per joint: the given ones (one given: for all), else ``default``."""
    if given is None:
        return np.array(default, dtype=float)
    arr = np.asarray(given, dtype=float).reshape(-1)
    return np.full(n_joints, arr[0]) if arr.size == 1 else arr
