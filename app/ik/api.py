"""Genesis-style pose-IK entry points on a RobotModel: argument checks and shapes.

``inverse_kinematics`` (one link) and ``inverse_kinematics_multilink`` (several links, one
configuration satisfying all targets) both accept one problem (``pos (3,)``) or a batch
(``pos (n, 3)``), solved in one vectorised call. ``init_qpos`` outside the joint limits is
clipped into them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from app.errors import InputError
from app.ik.analytic import closed_form
from app.ik.solver import IKOptions, solve_ik
from app.ik.prepared import PoseIK
from app.ik.targets import PoseTargets
from app.kinematics.model import LinkRef, RobotModel
from app.validation import as_mask, as_vectors

_OPTION_NAMES = set(IKOptions.__dataclass_fields__)


def free_dofs(model: RobotModel, dofs_idx: Sequence[int] | None) -> np.ndarray:
    """Boolean mask of the DOFs to solve. Shape (n_dofs,)."""
    if dofs_idx is None:
        return np.ones(model.n_dofs, dtype=bool)
    idx = np.asarray(dofs_idx)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise InputError(f"dofs_idx must be a non-empty list of DOF indices, got {dofs_idx!r}")
    if idx.min() < 0 or idx.max() >= model.n_dofs:
        raise InputError(f"dofs_idx {idx.tolist()} out of range; valid: 0..{model.n_dofs - 1} for {list(model.dof_names)}")
    free = np.zeros(model.n_dofs, dtype=bool)
    free[idx] = True
    return free


def initial_configs(model: RobotModel, init_qpos: object, batch_shape: tuple[int, ...]) -> np.ndarray:
    """init_qpos (or the mid-point of the limits) broadcast to (B, n_dofs) and clipped into the limits."""
    q0 = model.mid_config() if init_qpos is None else model.check_q(init_qpos, "init_qpos")
    if q0.ndim > 2:
        raise InputError(f"init_qpos must have shape (n_dofs,) or (n, n_dofs), got {q0.shape}")
    q0 = np.broadcast_to(q0, batch_shape + (model.n_dofs,)).reshape(-1, model.n_dofs)
    return model.clip(q0)


def _options(kwargs: dict) -> IKOptions:
    unknown = set(kwargs) - _OPTION_NAMES
    if unknown:
        raise InputError(f"unknown IK option(s) {sorted(unknown)}; valid: {sorted(_OPTION_NAMES)}")
    return IKOptions(**kwargs)


def inverse_kinematics_multilink(model: RobotModel, links: Sequence[LinkRef], poss: Sequence, quats: Sequence | None = None,
                                 *, local_points: Sequence | None = None, init_qpos: object = None,
                                 pos_mask=(True, True, True), rot_mask=(True, True, True),
                                 dofs_idx: Sequence[int] | None = None, return_error: bool = False,
                                 return_info: bool = False, seeds: np.ndarray | None = None,
                                 analytic_seed: bool = True, **options):
    """One configuration that brings every link to its target. See :func:`inverse_kinematics`.

    Args:
        links: Link names (or indices), one per target.
        poss: Target positions [m], each (3,) or (n, 3); None entries constrain no position.
        quats: Target (w, x, y, z) quaternions, each (4,) or (n, 4); None entries (or ``quats=None``)
            constrain no orientation for that link.
        seeds: Starting points tried after ``init_qpos``, before random restarts. Shape ([n,] k, n_dofs).
        analytic_seed: Where the closed form applies (one link, full pose, no masks, no
            ``dofs_idx``; see :mod:`app.ik.analytic`), start from the valid branch nearest to
            ``init_qpos`` and try the others next; the numeric solver polishes.
    Returns:
        q of shape ([n,] n_dofs); with ``return_error`` also err ([n,] n_links, 6); with
        ``return_info`` an :class:`IKResult` instead.
    """
    if isinstance(links, (str, int)) or not isinstance(links, Sequence):
        raise InputError(f"links must be a list of link names, got {links!r}")
    quats = [None] * len(links) if quats is None else list(quats)
    poss = list(poss)
    if len(poss) != len(links):
        raise InputError(f"links, poss and quats must have the same length, got {len(links)}, {len(poss)}, {len(quats)}")
    if any(p is None for p in poss):
        if not all(p is None for p in poss):
            raise InputError("either every entry of poss is given or none (pass pos_mask to free axes)")
        poss, pos_mask = [np.zeros(3)] * len(links), (False, False, False)
    hint = () if init_qpos is None else np.shape(init_qpos)[:-1]
    targets = PoseTargets.build(model, links, poss, quats, local_points, pos_mask, rot_mask, hint)
    q0, free, opts = initial_configs(model, init_qpos, targets.batch_shape), free_dofs(model, dofs_idx), _options(options)
    arm = closed_form(model, targets) if analytic_seed and dofs_idx is None else None
    result = solve_ik(model, targets, q0, free, opts, seeds, arm)
    if return_info:
        return result
    return (result.q, result.err) if return_error else result.q


def inverse_kinematics(model: RobotModel, link: LinkRef, pos: object = None, quat: object = None, *,
                       local_point: object = None, return_error: bool = False, return_info: bool = False, **kwargs):
    """Joint positions that bring ``link`` (or ``local_point`` on it) to a target pose.

    Args:
        link: Link name (or index).
        pos: Target position [m] in the base frame. Shape (3,) or (n, 3); None for orientation only.
        quat: Target (w, x, y, z) quaternion. Shape (4,) or (n, 4); None for position only.
        local_point: Point in the link frame to place at ``pos`` [m]. Shape (3,).
        init_qpos: Start. Shape (n_dofs,) or (n, n_dofs); default the mid-point of the limits;
            clipped into the limits.
        pos_mask: Base-frame position axes to match. rot_mask: link axes to align (see targets).
        dofs_idx: DOFs to solve; the others are held at ``init_qpos``.
        pos_tol, rot_tol, max_iters, max_restarts, seed, ...: :class:`IKOptions` fields.
    Returns:
        q of shape ([n,] n_dofs); with ``return_error`` ``(q, err)``, err ([n,] 6) = position error
        [m] then rotation-vector error [rad]; with ``return_info`` an :class:`IKResult`.
    """
    simple = pos is not None and all(  # dofs_idx, seeds and unknown keys take the general path
        k in ("init_qpos", "pos_mask", "rot_mask", "analytic_seed") or k in _OPTION_NAMES for k in kwargs)
    if simple:
        solver = prepared(model, link, pos=pos, quat=quat, local_point=local_point, **kwargs)
        result = solver.solve(pos, quat, kwargs.get("init_qpos"))
    else:
        result = inverse_kinematics_multilink(model, [link], [pos], [quat],
                                              local_points=None if local_point is None else [local_point],
                                              return_info=True, **kwargs).one_link()
    if return_info:
        return result
    return (result.q, result.err) if return_error else result.q


def prepared(model: RobotModel, link: LinkRef, *, pos: object, quat: object, local_point: object = None,
             init_qpos: object = None, pos_mask=(True, True, True), rot_mask=(True, True, True),
             analytic_seed: bool = True, **options) -> PoseIK:
    """A cached :class:`PoseIK` for these arguments (``quat=None`` means position only).

    The cache is keyed on the arguments as given; they are validated when a solver is built.
    """
    del pos, init_qpos  # per-call data
    lp = None if local_point is None else tuple(as_vectors(local_point, "local_point", 3).tolist())
    return _prepared(model, link, lp, _hashable(pos_mask), _hashable(rot_mask), quat is None, bool(analytic_seed),
                     tuple(sorted(options.items())))


def _hashable(mask) -> tuple:
    return mask if isinstance(mask, tuple) else tuple(np.asarray(mask).tolist())


@functools.lru_cache(maxsize=16)
def _prepared(model, link, local_point, pos_mask, rot_mask, position_only, analytic_seed, options) -> PoseIK:
    mask = as_mask(rot_mask, "rot_mask")  # checked even when the call constrains no orientation
    rot = (False, False, False) if position_only else tuple(mask.tolist())
    return PoseIK(model, link, local_point=local_point, pos_mask=pos_mask, rot_mask=rot,
                  analytic_seed=analytic_seed, options=_options(dict(options)))
