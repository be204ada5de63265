"""Which closed-form branch a configuration is on (app.ik.analytic's numbering: 4 shoulder + 2 wrist flip + elbow),
for arms of the WidowX AI's family: the configuration's own tool pose solved for all eight branches, and the one
that gives the configuration back.

Where two branches meet (a singular configuration: joint 5 normal to the arm plane, the elbow stretched, the wrist
centre on the base axis) a configuration belongs to both, and its branch is -1: a path that crosses such a place
changes branch without a jump, and a caller compares the branches on either side of it.
"""

from __future__ import annotations

import numpy as np

from app.errors import NotApplicableError
from app.ik.analytic import analytic_ik, certified_arm
from app.kinematics.model import KinematicModel, LinkRef

MATCH_TOL = 1e-5  # [rad]: a branch's solution this close to the configuration is the configuration's
APART_TOL = 1e-3  # [rad]: a second branch this close too: the two meet here (-1)


def branch_of(model: KinematicModel, link: LinkRef, q: np.ndarray) -> np.ndarray:
    """(B,) int: the branch of each configuration ``q`` (B, n_dofs) for the tool ``link`` (0..7; -1 where two
    branches meet or none gives it back). Raises NotApplicableError where the arm is not of the family."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    index = model.link_index(link)
    arm = certified_arm(model, index)
    if arm is None:
        raise NotApplicableError(f"{model.link_names[index]}: no closed form (app.ik.analytic.certify), no branches")
    pos, quat = model.forward_kinematics(q, [index])
    q_arm, valid = analytic_ik(model, index, pos[:, 0], quat[:, 0], q_rest=q[0], arm=arm)
    gap = np.abs(np.angle(np.exp(1j * (q_arm - q[:, None, arm.dof_idx])))).max(axis=-1)  # wrapped [rad]
    gap = np.where(valid, gap, np.inf)
    order = np.argsort(gap, axis=1)
    best = np.take_along_axis(gap, order[:, :1], axis=1)[:, 0]
    second = np.take_along_axis(gap, order[:, 1:2], axis=1)[:, 0]
    return np.where((best < MATCH_TOL) & (second > APART_TOL), order[:, 0], -1)


def labeller(model: KinematicModel, link: LinkRef):
    """``q (B, n_dofs) -> branches (B,)`` for the tool ``link`` (branch_of); None where the arm has no closed
    form."""
    if certified_arm(model, model.link_index(link)) is None:
        return None
    return lambda q: branch_of(model, link, q)
