"""One full-pose target in one compiled call (:meth:`app.ik.prepared.PoseIK.solve_pose`): the target checked and made
rows, the closed-form-seeded loop (app.ik._analytic_kernel), and the convergence test, all inside the kernel, so that a
single call from Python pays one dispatch."""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._analytic_kernel import solve_seeded_kernel
from app.validation import quat_to_matrix_batch


@njit(cache=True, nogil=True)
def one_pose_kernel(pos, quat, q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, arm):
    """pos (3,) [m], quat (4,) (w, x, y, z), q_init (1, n_dofs); tgt_pos (1, 1, 3), tgt_rot (1, 1, 3, 3): scratch the
    target is written into; the rest as solve_seeded_kernel. Returns (q (n_dofs,), status): 1 within both
    tolerances, 0 not, -1 a target not finite or a quaternion of zero length (nothing solved)."""
    rot, smallest = quat_to_matrix_batch(quat.reshape(1, 4))  # the conversion every IK call makes: the same answers
    if not (np.isfinite(pos[0] + pos[1] + pos[2]) and np.isfinite(rot[0, 0, 0] + smallest) and smallest > 0.0):
        return q_init[0].copy(), -1
    tgt_rot[0, 0] = rot[0]
    for r in range(3):
        tgt_pos[0, 0, r] = pos[r]
    q, err, _, _ = solve_seeded_kernel(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, arm)
    e = err[0, 0]
    ok = np.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]) <= opts.pos_tol and \
        np.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5]) <= opts.rot_tol
    return q[0], 1 if ok else 0
