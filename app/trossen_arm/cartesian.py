"""The driver's Cartesian side: the tool frame, its pose as 6 numbers, IK of a goal, a straight-line path.

A Cartesian pose is the real driver's: translation [m] then the angle-axis rotation [rad] of the tool frame
in the arm's base frame; the tool frame is the flange (link_6) moved by the end effector's ``t_flange_tool``.
IK is app.RobotModel's (numba LM with the closed-form seed), on the six arm DOFs only.
"""

from __future__ import annotations

import numpy as np

from app.ik.robot_model import RobotModel
from app.kinematics.rotations import matrix_to_quat, so3_exp, so3_log
from app.trossen_arm.joint_space import FLANGE_LINK, JointMap

POS_TOL, ROT_TOL = 1e-4, 1e-3  # [m], [rad]: what counts as an IK solution
REFINE_TOL = (1e-9, 1e-8)  # [m], [rad]: how close a Cartesian path's samples are solved (ToolKinematics.solve)
DAMPING = 1e-3  # damped least squares on the tool Jacobian (twists -> joint velocities)


def pose_matrix(pose6: np.ndarray) -> np.ndarray:
    """4x4 transform of a 6-vector (translation [m], angle-axis [rad])."""
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = so3_exp(np.asarray(pose6[3:], float)), pose6[:3]
    return T


def pose_vector(T: np.ndarray) -> np.ndarray:
    """The 6-vector (translation, angle-axis) of a 4x4 transform."""
    return np.concatenate([T[:3, 3], so3_log(T[:3, :3])])


class ToolKinematics:
    """FK, Jacobian and IK of the tool frame of one arm.

    Args:
        model: The arm's RobotModel. joints: its driver joint map. t_flange_tool: the tool frame in the flange
            frame (6-vector); replaced through ``set_tool``.
    """

    def __init__(self, model: RobotModel, joints: JointMap, t_flange_tool: np.ndarray):
        self.model, self.joints = model, joints
        self.arm_dofs = joints.dof[:6]
        self.set_tool(t_flange_tool)

    def set_tool(self, t_flange_tool: np.ndarray) -> None:
        self.T_flange_tool = pose_matrix(np.asarray(t_flange_tool, float))
        self._point = np.ascontiguousarray(self.T_flange_tool[:3, 3])
        self._flange = self.model.link_index(FLANGE_LINK)

    def pose_and_jacobian(self, q_dofs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tool frame's 4x4 pose in the base frame and its geometric Jacobian on the arm DOFs (6, 6; rows
        linear then angular) at robot DOFs q (n_dofs,), from one FK."""
        R, p = self.model.link_frames(np.asarray(q_dofs, dtype=float))
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R[self._flange], p[self._flange]
        J = self.model.jacobian_from_frames(R, p, self._flange, self._point)
        return T @ self.T_flange_tool, J[:, self.arm_dofs]

    def tool_pose(self, q_dofs: np.ndarray) -> np.ndarray:
        """The tool frame's 4x4 pose in the base frame at robot DOFs q (n_dofs,)."""
        return self.pose_and_jacobian(q_dofs)[0]

    def jacobian(self, q_dofs: np.ndarray) -> np.ndarray:
        """The tool point's geometric Jacobian on the arm DOFs, rows linear then angular. Shape (6, 6)."""
        return self.pose_and_jacobian(q_dofs)[1]

    def joint_velocities(self, q_dofs: np.ndarray, twist: np.ndarray, J: np.ndarray | None = None) -> np.ndarray:
        """Arm joint velocities (6,) [rad/s] that give the tool the twist (linear [m/s], angular [rad/s]); ``J``:
        the tool Jacobian at q_dofs when the caller has it."""
        J = self.jacobian(q_dofs) if J is None else J
        return J.T @ np.linalg.solve(J @ J.T + DAMPING**2 * np.eye(6), twist)

    def solve(self, goal: np.ndarray, q_seed: np.ndarray, refine: bool = False) -> np.ndarray | None:
        """Robot DOFs (n_dofs,) that put the tool at ``goal`` (4x4), the arm DOFs only moved from q_seed; None
        where IK finds none within POS_TOL, ROT_TOL. ``refine``: the solution then taken on from where it is to
        REFINE_TOL (no restart, so on its branch): a path's samples solved only to POS_TOL held still while the
        pose moved less than that from the seed, and the path's commanded joints rose as a staircase."""
        T_flange = goal @ np.linalg.inv(self.T_flange_tool)
        pos, quat = T_flange[:3, 3], matrix_to_quat(T_flange[:3, :3])
        res = self.model.inverse_kinematics(FLANGE_LINK, pos, quat, init_qpos=q_seed,
                                            dofs_idx_local=list(self.arm_dofs), pos_tol=POS_TOL, rot_tol=ROT_TOL,
                                            return_info=True)
        if not bool(np.all(res.converged)):
            return None
        q = np.asarray(res.q, float).reshape(-1)
        if refine:
            fine = self.model.inverse_kinematics(FLANGE_LINK, pos, quat, init_qpos=q, max_samples=1,
                                                 dofs_idx_local=list(self.arm_dofs), pos_tol=REFINE_TOL[0],
                                                 rot_tol=REFINE_TOL[1], return_info=True)
            if float(np.max(fine.pos_err)) <= POS_TOL and float(np.max(fine.rot_err)) <= ROT_TOL:
                q = np.asarray(fine.q, float).reshape(-1)
        return q


def straight_line(start: np.ndarray, goal: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Poses (k, 4, 4) along the straight line from start to goal (4x4 each) at fractions s (k,): the
    translation linear, the rotation along the geodesic."""
    rel = so3_log(start[:3, :3].T @ goal[:3, :3])
    out = np.repeat(start[None], len(s), axis=0)
    out[:, :3, 3] = start[:3, 3] + s[:, None] * (goal[:3, 3] - start[:3, 3])
    out[:, :3, :3] = start[:3, :3] @ so3_exp(s[:, None] * rel)
    return out
