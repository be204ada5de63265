"""Cartesian commands as joint commands the simulated controller follows (app.trossen_arm.simulated_arm's
``Source``s).

- ``CartesianPath``: the tool along the straight line (translation linear, rotation on the geodesic) from its
  pose now to the goal, timed by the driver's rule for positions (quintic above 0.2 s, linear above 1 ms, a
  step below) on the path fraction. The whole path is solved by IK before the first step, at a sample every
  ``SAMPLE_DT`` (each seeded by the one before, refined to ``REFINE_TOL`` on its branch), and the joints go
  linearly between samples; a sample without an IK solution, or whose answer leaves the branch (a joint step above
  0.2 rad and 10 times the pose's step between samples: app.ik.branch_watch), fails the command before anything
  moves.
- ``TwistSource``: the tool's twist (a velocity-mode ramp of 6 values), turned into the arm joints'
  velocities through the damped pseudo-inverse of the tool Jacobian at the measured joints, every step.
"""

from __future__ import annotations

import math

import numpy as np

from app.errors import AppError
from app.ik.branch_watch import BranchLeave, first_leave, pose_steps
from app.trossen_arm.cartesian import ToolKinematics, pose_vector, straight_line
from app.trossen_arm.interpolation import Ramp, state_rows
from app.trossen_arm.joint_space import FLANGE_LINK

SAMPLE_DT = 0.01  # [s]: IK along a Cartesian path every 10 ms
RESOLVE_DT = 0.002  # [s]: a held twist's joint velocities from the Jacobian at the joints every 2 ms


class UnreachablePose(AppError):
    """No IK solution for a pose of a Cartesian path (``pose``: its 6-vector). Internal: the driver turns it
    into its RuntimeError."""

    def __init__(self, pose: np.ndarray):
        super().__init__(pose)
        self.pose = pose


class LeavesBranch(AppError):
    """A Cartesian path whose IK answers leave their branch (app.ik.branch_watch: ``leave``, at sample ``leave.index``
    of ``samples``), so the joints would jump between two samples; ``pose``: that sample's 6-vector. Internal: the
    driver turns it into its RuntimeError before anything moves."""

    def __init__(self, pose: np.ndarray, leave: BranchLeave, samples: int):
        super().__init__(pose, leave, samples)
        self.pose, self.leave, self.samples = pose, leave, samples


class CartesianPath:
    """Arm joint positions along a straight tool path.

    Args:
        tool: The arm's tool kinematics. q_start: robot DOFs where the path begins (the arm's command now).
        goal: The tool's goal pose (4x4). t0, duration: start [s] and goal_time [s].
    """

    def __init__(self, tool: ToolKinematics, q_start: np.ndarray, goal: np.ndarray, t0: float, duration: float):
        self.t0, self.duration = t0, duration
        profile = Ramp(0.0, duration, state_rows(np.zeros(1)), state_rows(np.ones(1)), order=2)
        n = max(2, math.ceil(duration / SAMPLE_DT) + 1)
        self.times = np.linspace(0.0, duration, n)
        s = np.array([profile.sample(t)[0, 0] for t in self.times])
        poses = straight_line(tool.tool_pose(q_start), goal, s)
        q_full = np.empty((n, len(q_start)))
        seed = q_start
        for k, pose in enumerate(poses):
            q = tool.solve(pose, seed, refine=True)
            if q is None:
                raise UnreachablePose(pose_vector(pose))
            q_full[k], seed = q, q
        T = np.concatenate([tool.tool_pose(q_start)[None], poses])
        leave = first_leave(tool.model, FLANGE_LINK, np.vstack([q_start, q_full]), tool.arm_dofs,
                            steps=pose_steps(T[:, :3, 3], T[:, :3, :3]))
        if leave is not None:  # (row 0 is the start: sample index - 1)
            raise LeavesBranch(pose_vector(poses[leave.index - 1]), leave._replace(index=leave.index - 1), n)
        self.q = q_full[:, tool.arm_dofs]
        self.goal_q = seed

    def sample(self, t: float, q_dofs: np.ndarray | None = None) -> np.ndarray:
        """(3, 6): the arm joints' positions, velocities (the segment's slope), zero accelerations at t [s]."""
        out = np.zeros((3, 6))
        tau = min(max(t - self.t0, 0.0), self.duration)
        k = int(np.searchsorted(self.times, tau, side="right")) - 1
        if k >= len(self.times) - 1:
            out[0] = self.q[-1]
            return out
        h = self.times[k + 1] - self.times[k]
        w = (tau - self.times[k]) / h
        out[0] = self.q[k] + w * (self.q[k + 1] - self.q[k])
        out[1] = (self.q[k + 1] - self.q[k]) / h
        return out


class TwistSource:
    """Arm joint velocities that give the tool a twist following a velocity ramp.

    Args:
        tool: The arm's tool kinematics. twist: the Ramp (order 1) of the 6 twist values (linear [m/s],
            angular [rad/s]).
    """

    def __init__(self, tool: ToolKinematics, twist: Ramp, q_dofs: np.ndarray, J: np.ndarray):
        self.tool, self.twist = tool, twist
        self._at, self._qdot = twist.t0, tool.joint_velocities(q_dofs, twist.sample(twist.t0)[0], J)

    def sample(self, t: float, q_dofs: np.ndarray) -> np.ndarray:
        """(3, 6): the arm joints' velocities now (row 0, a velocity mode's value), zeros below; the Jacobian
        is taken again every RESOLVE_DT of a ramp at rest (and every step while the twist ramps)."""
        if t - self._at >= RESOLVE_DT or t < self.twist.t_end:
            self._at, self._qdot = t, self.tool.joint_velocities(q_dofs, self.twist.sample(t)[0])
        out = np.zeros((3, 6))
        out[0] = self._qdot
        return out
