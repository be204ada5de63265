"""The model's tables as the compiled kernels take them: named fields, not positions.

A kernel reads ``fk.parent`` or ``jac.ancestor``; adding a field is one edit here and one where
the model fills it (KinematicModel._build_tables).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class FKTables(NamedTuple):
    """What forward kinematics needs. L links, n DOFs.

    Attributes:
        parent: Parent link of each link, -1 for the root. Shape (L,).
        R_origin, p_origin: Joint origins in the parent frame. Shapes (L, 3, 3), (L, 3).
        link_dof: DOF that moves each link's joint, -1 if fixed. Shape (L,).
        axis: Unit joint axes in the joint frame. Shape (n, 3).
        revolute: True for revolute/continuous DOFs, False for prismatic ones. Shape (n,).
    """

    parent: np.ndarray
    R_origin: np.ndarray
    p_origin: np.ndarray
    link_dof: np.ndarray
    axis: np.ndarray
    revolute: np.ndarray


class JacobianTables(NamedTuple):
    """What geometric Jacobians need (with the link frames).

    Attributes:
        dof_link: Child link of each DOF's joint. Shape (n,).
        axis, revolute: As in FKTables.
        ancestor: ancestor[i, k] is True when DOF k moves link i. Shape (L, n).
    """

    dof_link: np.ndarray
    axis: np.ndarray
    revolute: np.ndarray
    ancestor: np.ndarray
