"""What the IK kernels take besides the model's tables: named fields, not packed arrays.

The compiled LM loop (app.ik._lm), the residual (app.ik._residual) and the closed-form seeds
(app.ik._analytic_kernel) read these by field; each is filled in one place (PoseTargets,
lm_options, kernel_arm).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class TaskTables(NamedTuple):
    """The masked pose task of T link targets.

    Attributes:
        links: Link indices. Shape (T,).
        local_points: Point on each link, link frame [m]. Shape (T, 3).
        rot_mode: ROT_NONE, ROT_AXIS or ROT_FULL per link (app.ik._residual). Shape (T,).
        rot_axis: The link axis aligned in ROT_AXIS mode (0, 1 or 2).
        pos_mask: Position axes matched, per link, axes of the mask frame. Shape (T, 3).
        frame: Rotation from the base frame to the mask frame, in which the position mask applies and
            the residual is expressed (identity: the base frame). Shape (3, 3).
    """

    links: np.ndarray
    local_points: np.ndarray
    rot_mode: np.ndarray
    rot_axis: int
    pos_mask: np.ndarray
    frame: np.ndarray


class LMOptions(NamedTuple):
    """Settings of the compiled LM loop (from app.ik.solver.IKOptions by lm_options).

    Attributes:
        pos_tol, rot_tol: Convergence tolerances [m], [rad].
        char_length: Metres per radian in the weighted residual.
        damping2: Floor of lambda^2 / mu [m^2] (Genesis's damping squared).
        step_limit: Trust region on the weighted step norm.
        stall_rtol: Relative decrease that counts as progress. stall_window: iterations without it.
        max_iters: Iterations per attempt.
        step_scale: Per-DOF scale of the step norm (1 revolute, prismatic_step prismatic). Shape (n,).
        q_lo, q_hi: Bounds of every iterate (+-inf without respect_joint_limit). Shape (n,).
    """

    pos_tol: float
    rot_tol: float
    char_length: float
    damping2: float
    step_limit: float
    stall_rtol: float
    stall_window: int
    max_iters: int
    step_scale: np.ndarray
    q_lo: np.ndarray
    q_hi: np.ndarray


class ArmTables(NamedTuple):
    """A certified closed-form arm as the compiled seeds take it (app.ik.analytic.kernel_arm).

    Attributes:
        R_base_C, o_base_C: The canonical frame C in the base frame. Shapes (3, 3), (3,).
        dofs: The six arm DOFs, base to tip. Shape (6,).
        tool: Tool link index. local_point: The tool point on it [m]. Shape (3,).
        W0: Wrist centre at the arm's zero. w4, w5: Wrist axes. Shapes (3,).
        plane: (P1 (3), |L1|, |L2|, angle of L1, angle of L2, W3 (3), a4 unit (3)) flattened. Shape (10,)+.
        signs: Joint direction signs of the planar chain. Shape (3,).
    """

    R_base_C: np.ndarray
    o_base_C: np.ndarray
    dofs: np.ndarray
    tool: int
    local_point: np.ndarray
    W0: np.ndarray
    w4: np.ndarray
    w5: np.ndarray
    plane: np.ndarray
    signs: np.ndarray
