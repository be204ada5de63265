"""The driver's joint-space commands: modes, and positions / velocities / efforts / external efforts of all
joints, the arm joints, the gripper or one joint, with the real signatures and defaults.

Units: rad, rad/s, rad/s^2, N m for arm joints; m, m/s, m/s^2, N for the gripper; goal_time [s]. Each goal
starts from the joints' current command (so consecutive goals are continuous) and follows the rules of
app.trossen_arm.interpolation; ``blocking`` returns once goal_time of simulated time has passed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.trossen_arm.containers import VectorDouble
from app.trossen_arm.driver_core import ORDER, DriverCore
from app.trossen_arm.enums import Mode
from app.trossen_arm.failures import logic_error
from app.trossen_arm.interpolation import Ramp, state_rows
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.recorder import Goal

CLIP_SLACK = 1e-6  # [rad or m]: a goal this close beyond a limit (rounding: a spline's end at 0) is not a clip

ALL, ARM, GRIPPER = np.arange(N_JOINTS), np.arange(N_JOINTS - 1), np.array([N_JOINTS - 1])


class JointCommands(DriverCore):
    """Modes and joint-space goals."""

    # ------------------------------------------------------------------ modes
    def set_all_modes(self, mode: Mode = Mode.idle) -> None:
        """Set all joints to the same mode."""
        self._set_modes(ALL, mode)

    def set_arm_modes(self, mode: Mode = Mode.idle) -> None:
        """Set the mode of the arm joints (the gripper's is left as it is)."""
        self._set_modes(ARM, mode)

    def set_gripper_mode(self, mode: Mode = Mode.idle) -> None:
        """Set the mode of the gripper joint (the arm joints' are left as they are)."""
        self._set_modes(GRIPPER, mode)

    def set_joint_modes(self, modes: Sequence[Mode]) -> None:
        """Set the mode of each joint (one per joint)."""
        modes = list(modes)
        if len(modes) != N_JOINTS:
            raise logic_error(f"Invalid modes size: expected {N_JOINTS}, got {len(modes)}", self._logger)
        for j, mode in enumerate(modes):
            self._set_modes(np.array([j]), mode)

    def get_modes(self) -> list[Mode]:
        """The modes of all joints."""
        return list(self._require().controller.modes)

    def _set_modes(self, idx: np.ndarray, mode: Mode) -> None:
        slot = self._ready()
        try:
            mode = Mode(mode)
        except ValueError:
            raise logic_error(f"Invalid mode: expected idle (0), position (1), velocity (2), external_effort (3), "
                              f"or effort (4), got {mode}", self._logger) from None
        changed = np.array([j for j in idx if slot.controller.modes[j] != mode], dtype=int)
        if changed.size:  # a joint already in the mode keeps its command, as on the real arm
            slot.controller.set_modes(changed, mode)

    # ------------------------------------------------------------------ the one path of every joint goal
    def _goal(self, idx: np.ndarray, mode: Mode, goal: np.ndarray, d1: object, d2: object, goal_time: float,
              blocking: bool, what: str) -> None:
        """Joints idx (in ``mode``) towards goal (n,), with goal derivatives d1, d2 (None: zeros)."""
        slot = self._ready()
        n = len(idx)
        goal = self._values(goal, n, f"goal {what}")
        d1 = None if d1 is None else self._values(d1, n, "goal feedforward velocities" if mode == Mode.position
                                                  else "goal feedforward accelerations")
        d2 = None if d2 is None else self._values(d2, n, "goal feedforward accelerations")
        t = self._goal_time(goal_time)
        self._check_modes(slot, idx, mode)
        c = slot.controller
        start = c.desired[:, idx].copy()
        c.drive(idx, Ramp(self._world.t, t, start, state_rows(goal, d1, d2), ORDER[mode]))
        self._finish(t, blocking, f"joint {what}", goal=lambda: self._tool_goal(c, idx, goal, mode))

    def _tool_goal(self, c, idx: np.ndarray, goal: np.ndarray, mode: Mode) -> Goal:
        """What a goal aims the arm at: where a position goal puts the tool (4x4, base frame; the other joints
        where they are commanded) and the joints it clips to their limits; a gripper goal keeps the arm's."""
        clipped = () if mode != Mode.position else tuple(
            int(j) for j, value in zip(idx, goal)
            if not c.limits[j].position_min - CLIP_SLACK <= value <= c.limits[j].position_max + CLIP_SLACK)
        if not np.isin(idx, ARM).any():
            return Goal(keep=True, clipped=clipped)
        if mode != Mode.position:
            return Goal()
        q = c.measured.q_dofs.copy()
        arm = c.desired[0, ARM].copy()
        for j, value in zip(idx, goal):
            if j < len(ARM):
                arm[j] = value
        q[self._slot.joints.dof[ARM]] = arm
        return Goal(self._tool.tool_pose(q), clipped=clipped)

    # ------------------------------------------------------------------ positions
    def set_all_positions(self, goal_positions: VectorDouble, goal_time: float = 2.0, blocking: bool = True,
                          goal_feedforward_velocities: VectorDouble | None = None,
                          goal_feedforward_accelerations: VectorDouble | None = None) -> None:
        """Set the positions of all joints [rad, m]; feed-forward velocities [rad/s, m/s], accelerations."""
        self._goal(ALL, Mode.position, goal_positions, goal_feedforward_velocities, goal_feedforward_accelerations,
                   goal_time, blocking, "positions")

    def set_arm_positions(self, goal_positions: VectorDouble, goal_time: float = 2.0, blocking: bool = True,
                          goal_feedforward_velocities: VectorDouble | None = None,
                          goal_feedforward_accelerations: VectorDouble | None = None) -> None:
        """Set the positions of the arm joints [rad]."""
        self._goal(ARM, Mode.position, goal_positions, goal_feedforward_velocities, goal_feedforward_accelerations,
                   goal_time, blocking, "positions")

    def set_gripper_position(self, goal_position: float, goal_time: float = 2.0, blocking: bool = True,
                             goal_feedforward_velocity: float | None = None,
                             goal_feedforward_acceleration: float | None = None) -> None:
        """Set the position of the gripper [m]."""
        self._goal(GRIPPER, Mode.position, [goal_position], _one(goal_feedforward_velocity),
                   _one(goal_feedforward_acceleration), goal_time, blocking, "positions")

    def set_joint_position(self, joint_index: int, goal_position: float, goal_time: float = 2.0,
                           blocking: bool = True, goal_feedforward_velocity: float | None = None,
                           goal_feedforward_acceleration: float | None = None) -> None:
        """Set the position of one joint [rad or m]."""
        idx = np.array([self._joint_index(joint_index)])
        self._goal(idx, Mode.position, [goal_position], _one(goal_feedforward_velocity),
                   _one(goal_feedforward_acceleration), goal_time, blocking, "positions")

    # ------------------------------------------------------------------ velocities
    def set_all_velocities(self, goal_velocities: VectorDouble, goal_time: float = 2.0, blocking: bool = True,
                           goal_feedforward_accelerations: VectorDouble | None = None) -> None:
        """Set the velocities of all joints [rad/s, m/s]."""
        self._goal(ALL, Mode.velocity, goal_velocities, goal_feedforward_accelerations, None, goal_time, blocking,
                   "velocities")

    def set_arm_velocities(self, goal_velocities: VectorDouble, goal_time: float = 2.0, blocking: bool = True,
                           goal_feedforward_accelerations: VectorDouble | None = None) -> None:
        """Set the velocities of the arm joints [rad/s]."""
        self._goal(ARM, Mode.velocity, goal_velocities, goal_feedforward_accelerations, None, goal_time, blocking,
                   "velocities")

    def set_gripper_velocity(self, goal_velocity: float, goal_time: float = 2.0, blocking: bool = True,
                             goal_feedforward_acceleration: float | None = None) -> None:
        """Set the velocity of the gripper [m/s]."""
        self._goal(GRIPPER, Mode.velocity, [goal_velocity], _one(goal_feedforward_acceleration), None, goal_time,
                   blocking, "velocities")

    def set_joint_velocity(self, joint_index: int, goal_velocity: float, goal_time: float = 2.0,
                           blocking: bool = True, goal_feedforward_acceleration: float | None = None) -> None:
        """Set the velocity of one joint [rad/s or m/s]."""
        idx = np.array([self._joint_index(joint_index)])
        self._goal(idx, Mode.velocity, [goal_velocity], _one(goal_feedforward_acceleration), None, goal_time,
                   blocking, "velocities")

    # ------------------------------------------------------------------ efforts
    def set_all_efforts(self, goal_efforts: VectorDouble, goal_time: float = 2.0, blocking: bool = True) -> None:
        """Set the efforts of all joints [N m, N] (linear interpolation)."""
        self._goal(ALL, Mode.effort, goal_efforts, None, None, goal_time, blocking, "efforts")

    def set_arm_efforts(self, goal_efforts: VectorDouble, goal_time: float = 2.0, blocking: bool = True) -> None:
        """Set the efforts of the arm joints [N m]."""
        self._goal(ARM, Mode.effort, goal_efforts, None, None, goal_time, blocking, "efforts")

    def set_gripper_effort(self, goal_effort: float, goal_time: float = 2.0, blocking: bool = True) -> None:
        """Set the effort of the gripper [N]."""
        self._goal(GRIPPER, Mode.effort, [goal_effort], None, None, goal_time, blocking, "efforts")

    def set_joint_effort(self, joint_index: int, goal_effort: float, goal_time: float = 2.0,
                         blocking: bool = True) -> None:
        """Set the effort of one joint [N m or N]."""
        idx = np.array([self._joint_index(joint_index)])
        self._goal(idx, Mode.effort, [goal_effort], None, None, goal_time, blocking, "efforts")

    def set_all_external_efforts(self, goal_external_efforts: VectorDouble, goal_time: float = 2.0,
                                 blocking: bool = True) -> None:
        """Set the external efforts of all joints [N m, N]: on top of the gravity compensation."""
        self._goal(ALL, Mode.external_effort, goal_external_efforts, None, None, goal_time, blocking,
                   "external efforts")

    def set_arm_external_efforts(self, goal_external_efforts: VectorDouble, goal_time: float = 2.0,
                                 blocking: bool = True) -> None:
        """Set the external efforts of the arm joints [N m]."""
        self._goal(ARM, Mode.external_effort, goal_external_efforts, None, None, goal_time, blocking,
                   "external efforts")

    def set_gripper_external_effort(self, goal_external_effort: float, goal_time: float = 2.0,
                                    blocking: bool = True) -> None:
        """Set the external effort of the gripper [N] (positive opens)."""
        self._goal(GRIPPER, Mode.external_effort, [goal_external_effort], None, None, goal_time, blocking,
                   "external efforts")

    def set_joint_external_effort(self, joint_index: int, goal_external_effort: float, goal_time: float = 2.0,
                                  blocking: bool = True) -> None:
        """Set the external effort of one joint [N m or N]."""
        idx = np.array([self._joint_index(joint_index)])
        self._goal(idx, Mode.external_effort, [goal_external_effort], None, None, goal_time, blocking,
                   "external efforts")


def _one(value: float | None) -> list[float] | None:
    return None if value is None else [value]
