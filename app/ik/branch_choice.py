"""``branch=`` in the Genesis-named pose IK: the answer on one closed-form branch chosen by the caller (Genesis users
asked to choose shoulder, elbow and wrist), for arms of the WidowX AI's family and full poses.

Branches are numbered as app.ik.analytic numbers them, 4 shoulder + 2 wrist flip + elbow (0..7); a configuration's
own branch is :func:`app.ik.branches.branch_of`'s, so a caller that found a posture it likes asks for that branch again.
The chosen branch's closed-form solution seeds the numeric solver, which polishes it without restarts (a restart could
land on another branch); a target the branch cannot reach (out of its reach or its joint limits) is not converged,
its answer the start.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from app.errors import InputError
from app.ik.analytic import analytic_ik, certified_arm
from app.kinematics.model import KinematicModel, LinkRef

N_BRANCHES = 8


def check_branch(branch: object) -> int:
    """``branch`` as an int 0..7 (or a (shoulder, wrist flip, elbow) triple of 0/1); InputError otherwise."""
    if isinstance(branch, (tuple, list)) and len(branch) == 3 and all(b in (0, 1, True, False) for b in branch):
        return 4 * int(branch[0]) + 2 * int(branch[1]) + int(branch[2])
    if isinstance(branch, (int, np.integer)) and not isinstance(branch, bool) and 0 <= branch < N_BRANCHES:
        return int(branch)
    raise InputError(f"branch must be an int 0..7 (4 shoulder + 2 wrist flip + elbow) or a (shoulder, wrist flip, "
                     f"elbow) triple of 0/1, got {branch!r}")


def on_branch(model: KinematicModel, link: LinkRef, pos: object, quat: object, branch: object, init_qpos: object,
              solve, local_point: object = None):
    """The IKResult of ``solve(init_qpos=seed, analytic_seed=False, max_samples=1)`` (the caller's pose IK with its
    other arguments) from the closed-form solution of ``branch``, its convergence anded with the branch reaching the
    target. InputError where the arm has no closed form or the target is not a full pose."""
    index = check_branch(branch)
    arm = certified_arm(model, model.link_index(link))
    if arm is None:
        raise InputError(f"branch= needs an arm with a closed form (the WidowX family); "
                         f"{model.link_names[model.link_index(link)]} has none")
    if pos is None or quat is None:
        raise InputError("branch= needs a full pose: pos and quat")
    start = model.mid_config() if init_qpos is None else model.check_q(init_qpos, "init_qpos")
    q_arm, valid = analytic_ik(model, link, pos, quat, local_point=local_point,
                               q_rest=np.asarray(start, dtype=float).reshape(-1, model.n_dofs)[0], arm=arm)
    reach = valid[..., index]
    seed = np.broadcast_to(start, q_arm.shape[:-2] + (model.n_dofs,)).copy()
    seed[..., arm.dof_idx] = np.where(reach[..., None], q_arm[..., index, :], seed[..., arm.dof_idx])
    result = solve(seed)
    return dataclasses.replace(result, converged=np.asarray(result.converged) & reach)
