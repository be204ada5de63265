"""A one-link pose-IK problem prepared once and solved many times (a control loop's IK).

Everything that does not change between calls (the masked task, the closed-form certificate,
the restart table, the solver options) is computed at construction; :meth:`PoseIK.solve` only
checks the target and runs the compiled loop. ``model.inverse_kinematics`` keeps a few of these
for recent argument combinations, so repeated calls take the same short path.
"""

from __future__ import annotations

import numpy as np

from app.errors import InputError
from app.ik._residual import ROT_NONE
from app.ik.analytic import closed_form
from app.ik.solver import IKOptions, IKResult, _kernel_options, restart_points, result_of, run_kernel
from app.ik.targets import PoseTargets, as_rows, batch_shape_of
from app.kinematics.model import LinkRef, RobotModel
from app.validation import as_rotation_matrices, as_vectors


class PoseIK:
    """Pose IK for one link (or a point on it) with fixed masks and options.

    Args:
        model: The robot. link: Link name (or index).
        local_point: Point in the link frame [m] to place at the target. Shape (3,).
        pos_mask, rot_mask: As in :func:`app.ik.api.inverse_kinematics`.
        analytic_seed: Start from closed-form branches where they apply.
        options: :class:`~app.ik.solver.IKOptions` fields.
    """

    def __init__(self, model: RobotModel, link: LinkRef, *, local_point=None, pos_mask=(True, True, True),
                 rot_mask=(True, True, True), analytic_seed: bool = True, options: IKOptions | None = None):
        self.model, self.options = model, options or IKOptions()
        lp = None if local_point is None else [local_point]
        self._template = PoseTargets.build(model, [link], [np.zeros(3)], [np.array([1.0, 0.0, 0.0, 0.0])], lp,
                                           pos_mask, rot_mask)
        self.uses_orientation = self._template.rot_mode[0] != ROT_NONE
        self._free = np.ones(model.n_dofs, dtype=bool)
        self._starts = restart_points(model, self._free, self.options, None, 1)
        self._kernel_options = _kernel_options(model, self.options)
        self._arm = closed_form(model, self._template) if analytic_seed else None
        t = self._template
        self._task = (t.links, t.local_points, t.rot_mode, t.rot_axis, t.pos_mask)
        self._identity, self._mid = np.eye(3), model.mid_config()
        self._mid_row = self._mid.reshape(1, -1)

    def solve(self, pos: object, quat: object = None, init_qpos: object = None) -> IKResult:
        """Solve for targets pos ([n,] 3) [m] and quat ([n,] 4) (w, x, y, z), from init_qpos ([n,] n_dofs).

        Returns an IKResult of batch shape () or (n,), per-link axes dropped (err ([n,] 6)).
        """
        model = self.model
        p = as_vectors(pos, "pos", 3)
        if quat is None and self.uses_orientation:
            raise InputError("quat is required: this solver constrains the orientation (rot_mask)")
        rot = self._identity if quat is None else as_rotation_matrices(quat, "quat")
        q0 = self._mid if init_qpos is None else model.check_q(init_qpos, "init_qpos")
        if p.ndim == 1 and rot.ndim == 2 and q0.ndim == 1:  # one problem: the common call, kept short
            batch = ()
            tgt_pos, tgt_rot = np.ascontiguousarray(p.reshape(1, 1, 3)), rot.reshape(1, 1, 3, 3)
            q0 = self._mid_row if init_qpos is None else model.clip(q0).reshape(1, -1)
        else:
            shapes = (p.shape[:-1], rot.shape[:-2], q0.shape[:-1])
            batch = shapes[0] if shapes[0] == shapes[1] == shapes[2] else batch_shape_of(list(shapes))
            tgt_pos = np.ascontiguousarray(as_rows(p[..., None, :], batch, (1, 3)))  # (n, 1 link, 3)
            tgt_rot = np.ascontiguousarray(as_rows(rot[..., None, :, :], batch, (1, 3, 3)))
            q0 = model.clip(as_rows(q0, batch, (model.n_dofs,)))
        q, err, iters, restarts = run_kernel(model, np.ascontiguousarray(q0), self._starts, tgt_pos, tgt_rot,
                                             self._task, self._free, self._kernel_options, self._arm)
        return result_of(q, err, self.options, iters, restarts, batch, one_link=True)
