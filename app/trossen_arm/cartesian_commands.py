"""The driver's Cartesian commands: the tool frame's pose, twist or wrench in the arm's base frame, with the
joint or the Cartesian interpolation space.

Poses are translation [m] then angle-axis [rad]; twists linear [m/s] then angular [rad/s]; wrenches force
[N] then torque [N m]. In joint space a goal pose is solved by IK once and the joints interpolate (quintic);
in Cartesian space the tool follows a straight line (app.trossen_arm.cartesian_sources). A goal (or a
sample of a Cartesian path) without an IK solution raises the real driver's RuntimeError, "Algorithm
interface cannot find an inverse kinematics solution for the Cartesian positions: [...]", before anything
moves. Feed-forward Cartesian velocities of a position goal set the joints' goal velocities (joint space);
Cartesian feed-forward accelerations are accepted and not used.
"""

from __future__ import annotations

import numpy as np

from app.trossen_arm.cartesian import pose_matrix
from app.trossen_arm.cartesian_sources import CartesianPath, LeavesBranch, TwistSource, UnreachablePose
from app.trossen_arm.containers import ArrayDouble6
from app.trossen_arm.driver_core import ORDER
from app.trossen_arm.enums import InterpolationSpace, Mode
from app.trossen_arm.failures import logic_error, runtime_error
from app.trossen_arm.interpolation import Ramp, state_rows
from app.trossen_arm.joint_commands import ARM, JointCommands

IK_FAILED = "Algorithm interface cannot find an inverse kinematics solution for the Cartesian positions: [{}]"
LEAVES = ("The Cartesian path leaves its inverse kinematics branch at sample {} of {} (pose [{}]): the joints would "
          "jump {:.3f} rad between samples ({}); nothing moved")


def fmt_double(x: float) -> str:
    """A float as the real driver's fmt ``{}`` prints it (shortest round trip, no trailing ``.0``)."""
    text = repr(float(x))
    return text.removesuffix(".0")


class CartesianCommands(JointCommands):
    """Cartesian goals, through the arm's ToolKinematics (``self._tool``)."""

    def _space(self, interpolation_space: InterpolationSpace) -> InterpolationSpace:
        try:
            return InterpolationSpace(interpolation_space)
        except ValueError:
            raise logic_error(f"Invalid interpolation space: expected joint (0) or cartesian (1), got "
                              f"{interpolation_space}", self._logger) from None

    def set_cartesian_positions(self, goal_positions: ArrayDouble6, interpolation_space: InterpolationSpace,
                                goal_time: float = 2.0, blocking: bool = True,
                                goal_feedforward_velocities: ArrayDouble6 | None = None,
                                goal_feedforward_accelerations: ArrayDouble6 | None = None,
                                num_trajectory_check_samples: int = 0) -> None:
        """Set the pose of the tool frame in the base frame (translation [m], angle-axis [rad])."""
        slot = self._ready()
        goal = self._values(goal_positions, 6, "goal positions")
        ff_v = None if goal_feedforward_velocities is None else self._values(goal_feedforward_velocities, 6,
                                                                             "goal feedforward velocities")
        if goal_feedforward_accelerations is not None:
            self._values(goal_feedforward_accelerations, 6, "goal feedforward accelerations")
        space, t = self._space(interpolation_space), self._goal_time(goal_time)
        self._check_modes(slot, ARM, Mode.position)
        c = slot.controller
        q_now = c.measured.q_dofs.copy()
        q_now[slot.joints.dof[:6]] = c.desired[0, :6]  # from the arm's command: consecutive goals join up
        try:
            if space == InterpolationSpace.cartesian:
                c.drive(ARM, CartesianPath(self._tool, q_now, pose_matrix(goal), self._world.t, t))
            else:
                self._joint_space_goal(slot, q_now, goal, ff_v, t)
        except UnreachablePose as exc:
            raise runtime_error(IK_FAILED.format(", ".join(fmt_double(x) for x in exc.pose)), self._logger) from None
        except LeavesBranch as exc:
            raise runtime_error(LEAVES.format(exc.leave.index, exc.samples, ", ".join(fmt_double(x) for x in exc.pose),
                                              exc.leave.jump, exc.leave.cause), self._logger) from None
        self._finish(t, blocking, f"cartesian positions ({space.name} space)", goal=pose_matrix(goal))

    def _joint_space_goal(self, slot, q_now: np.ndarray, goal: np.ndarray, ff_v: np.ndarray | None,
                          t: float) -> None:
        q_goal = self._tool.solve(pose_matrix(goal), q_now)
        if q_goal is None:
            raise UnreachablePose(goal)
        arm_goal = q_goal[self._tool.arm_dofs]
        v_goal = None if ff_v is None else self._tool.joint_velocities(q_goal, ff_v)
        c = slot.controller
        c.drive(ARM, Ramp(self._world.t, t, c.desired[:, ARM].copy(), state_rows(arm_goal, v_goal), ORDER[
            Mode.position]))

    def set_cartesian_velocities(self, goal_velocities: ArrayDouble6, interpolation_space: InterpolationSpace,
                                 goal_time: float = 2.0, blocking: bool = True,
                                 goal_feedforward_accelerations: ArrayDouble6 | None = None) -> None:
        """Set the twist of the tool frame (linear [m/s], angular [rad/s], base frame)."""
        slot = self._ready()
        twist = self._values(goal_velocities, 6, "goal velocities")
        acc = None if goal_feedforward_accelerations is None else self._values(
            goal_feedforward_accelerations, 6, "goal feedforward accelerations")
        space, t = self._space(interpolation_space), self._goal_time(goal_time)
        self._check_modes(slot, ARM, Mode.velocity)
        c = slot.controller
        q = c.measured.q_dofs
        J = self._tool.jacobian(q)
        if space == InterpolationSpace.cartesian:
            start = state_rows(J @ c.desired[0, :6])
            ramp = Ramp(self._world.t, t, start, state_rows(twist, acc), ORDER[Mode.velocity])
            c.drive(ARM, TwistSource(self._tool, ramp, q, J))
        else:
            v_goal = self._tool.joint_velocities(q, twist)
            a_goal = None if acc is None else self._tool.joint_velocities(q, acc)
            c.drive(ARM, Ramp(self._world.t, t, c.desired[:, ARM].copy(), state_rows(v_goal, a_goal),
                              ORDER[Mode.velocity]))
        self._finish(t, blocking, f"cartesian velocities ({space.name} space)")

    def set_cartesian_external_efforts(self, goal_external_efforts: ArrayDouble6,
                                       interpolation_space: InterpolationSpace, goal_time: float = 2.0,
                                       blocking: bool = True) -> None:
        """Set the wrench the tool applies (force [N], torque [N m], base frame) on top of gravity compensation;
        the joints' external efforts are J^T times it at the joints now (both spaces)."""
        slot = self._ready()
        wrench = self._values(goal_external_efforts, 6, "goal external efforts")
        self._space(interpolation_space)
        t = self._goal_time(goal_time)
        self._check_modes(slot, ARM, Mode.external_effort)
        c = slot.controller
        tau = self._tool.jacobian(c.measured.q_dofs).T @ wrench
        c.drive(ARM, Ramp(self._world.t, t, c.desired[:, ARM].copy(), state_rows(tau), ORDER[Mode.external_effort]))
        self._finish(t, blocking, "cartesian external efforts")
