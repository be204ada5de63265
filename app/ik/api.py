"""Genesis-style pose-IK entry points on a KinematicModel: Genesis's arguments -> a prepared solver.

``inverse_kinematics`` (one link) and ``inverse_kinematics_multilink`` (several links, one
configuration satisfying all targets) take Genesis's arguments, in Genesis's order, with
Genesis's meaning: one problem (``pos (3,)``) or a batch (``pos (n, 3)``) solved in one
vectorised call; ``poss=[]`` or ``quats=[]`` (or a None entry) leaves that part unconstrained;
``local_points=[]`` means the link origins; ``dofs_idx_local`` the DOFs to solve; Genesis's
option names (``max_samples``, ``max_solver_iters``, ``max_step_size``, ``damping``,
``respect_joint_limit``) beside ours (:class:`~app.ik.solver.IKOptions`, by keyword). Options
left None take our defaults. Both build (or reuse) one :class:`~app.ik.prepared.PoseIK` and call
it: there is one pipeline. ``init_qpos`` outside the joint limits is clipped into them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.errors import InputError
from app.ik.branch_choice import on_branch
from app.ik.cache import cached
from app.ik.prepared import IKProblem, PoseIK, dof_indices
from app.ik.solver import IKOptions
from app.ik.targets import as_frame
from app.kinematics.model import KinematicModel, LinkRef
from app.validation import as_mask, as_point

_ALL = (True, True, True)  # the default masks (one object, recognised at once)


def link_entries(values: Sequence | None, n: int, name: str) -> list:
    """Genesis's list arguments: None or [] -> n Nones; else exactly n entries."""
    if values is None:
        return [None] * n
    if isinstance(values, np.ndarray) and values.ndim >= 1 and len(values) == n:
        return list(values)
    if not isinstance(values, (list, tuple)):
        raise InputError(f"{name} must be a list with one entry per link ({n}) or empty, got {type(values).__name__}")
    if len(values) == 0:
        return [None] * n
    if len(values) != n:
        raise InputError(f"{name} must have one entry per link ({n}) or be empty, got {len(values)}")
    return list(values)


def _link_list(links: object) -> list:
    if isinstance(links, (str, int, np.integer)) or not isinstance(links, (list, tuple)) or len(links) == 0:
        raise InputError(f"links must be a non-empty list of links (names, indices or scene links), got {links!r:.80}")
    return [getattr(l, "idx_local", l) for l in links]


def _points_key(local_points: list) -> tuple | None:
    if all(p is None for p in local_points):
        return None
    return tuple(None if p is None else tuple(as_point(p, f"local_points[{i}]").tolist())
                 for i, p in enumerate(local_points))



def _mask_key(mask: object, name: str) -> tuple:
    """A mask as a key, checked first (a tuple or list of three bools passes at once)."""
    if mask is _ALL:
        return mask
    if isinstance(mask, (tuple, list)) and len(mask) == 3 and all(type(v) is bool for v in mask):
        return tuple(mask)
    return tuple(as_mask(mask, name).tolist())


def genesis_options(respect_joint_limit, max_samples, max_solver_iters, damping, pos_tol, rot_tol, max_step_size,
                    options: dict) -> dict:
    """Genesis's option arguments (None: ours by default) merged into our keyword options."""
    if (max_samples is max_solver_iters is damping is pos_tol is rot_tol is max_step_size is None
            and respect_joint_limit is True):
        return options
    given = dict(max_samples=max_samples, max_solver_iters=max_solver_iters, damping=damping, pos_tol=pos_tol,
                 rot_tol=rot_tol, max_step_size=max_step_size)
    merged = {k: v for k, v in given.items() if v is not None}
    if respect_joint_limit is not True:
        merged["respect_joint_limit"] = respect_joint_limit
    for k, v in options.items():
        if k in merged:
            raise InputError(f"{k} given twice")
        merged[k] = v
    return merged


def _options_key(options: dict) -> tuple:
    """Keyed with each value's type, so that True and 1 (or 1.0 and 1) never share a solver."""
    return tuple(sorted((k, type(v).__name__, v) for k, v in options.items())) if options else ()


def prepared_solver(model: KinematicModel, links: Sequence[LinkRef], has_pos: tuple[bool, ...],
                    has_rot: tuple[bool, ...], local_points: Sequence | None = None, pos_mask=_ALL, rot_mask=_ALL,
                    dofs_idx_local: Sequence[int] | None = None, analytic_seed: bool = True,
                    frame_rotation: object = None, options: dict | None = None) -> PoseIK:
    """The prepared solver (kept in the model's cache) that :func:`inverse_kinematics_multilink` calls for these
    fixed arguments (``options``: IKOptions fields in our names): a loop that solves the same problem every tick
    holds it and calls its ``solve_links`` with the same answers, without the argument handling of each call."""
    names, options = _link_list(links), dict(options or {})
    points = link_entries(local_points, len(names), "local_points")
    dofs = None if dofs_idx_local is None else dof_indices(model, dofs_idx_local)
    frame = None if frame_rotation is None else tuple(map(tuple, as_frame(frame_rotation).tolist()))
    key = (tuple(names), tuple(has_pos), tuple(has_rot), _points_key(points), _mask_key(pos_mask, "pos_mask"),
           _mask_key(rot_mask, "rot_mask"), dofs, bool(analytic_seed), frame, _options_key(options))

    def build() -> PoseIK:
        return PoseIK(model, IKProblem(*key[:9], IKOptions.from_kwargs(options)))

    return cached(model, key, build)


def inverse_kinematics_multilink(model: KinematicModel, links: Sequence[LinkRef], poss: Sequence | None = None,
                                 quats: Sequence | None = None, local_points: Sequence | None = None,
                                 init_qpos: object = None, respect_joint_limit: bool = True,
                                 max_samples: int | None = None, max_solver_iters: int | None = None,
                                 damping: float | None = None, pos_tol: float | None = None,
                                 rot_tol: float | None = None, pos_mask=_ALL,
                                 rot_mask=_ALL, max_step_size: float | None = None,
                                 dofs_idx_local: Sequence[int] | None = None, return_error: bool = False, *,
                                 return_info: bool = False, seeds: np.ndarray | None = None,
                                 analytic_seed: bool = True, frame_rotation: object = None, **options):
    """One configuration that brings every link to its target. See :func:`inverse_kinematics`.

    Args:
        links: Link names (or indices), one per target.
        poss: Target positions [m], each (3,) or (n, 3), base frame; ``[]``/None, or a None entry,
            constrains no position (of that link).
        quats: Target (w, x, y, z) quaternions, each (4,) or (n, 4); ``[]``/None, or a None entry,
            constrains no orientation (of that link).
        local_points: A point per link (link frame [m]) to place at its target; ``[]``/None: origins.
        seeds: Starting points tried after ``init_qpos``, before random restarts. Shape ([n,] k, n_dofs).
        analytic_seed: Where the closed form applies (one link, full pose, no masks, no
            ``dofs_idx_local``; see :mod:`app.ik.analytic`), start from the valid branch nearest to
            ``init_qpos`` and try the others next; the numeric solver polishes.
        the others: see :func:`inverse_kinematics`.
    Returns:
        q of shape ([n,] n_dofs); with ``return_error`` also err ([n,] n_links, 6); with
        ``return_info`` an :class:`IKResult` (link axis kept).
    """
    names = _link_list(links)
    poss, quats = link_entries(poss, len(names), "poss"), link_entries(quats, len(names), "quats")
    points = link_entries(local_points, len(names), "local_points")
    options = genesis_options(respect_joint_limit, max_samples, max_solver_iters, damping, pos_tol, rot_tol,
                              max_step_size, options)
    if "dofs_idx" in options:  # our earlier name
        if dofs_idx_local is not None:
            raise InputError("give dofs_idx_local (Genesis's name) or dofs_idx, not both")
        dofs_idx_local = options.pop("dofs_idx")
    has_pos, has_rot = tuple(p is not None for p in poss), tuple(q is not None for q in quats)
    solver = prepared_solver(model, names, has_pos, has_rot, points, pos_mask, rot_mask, dofs_idx_local,
                             analytic_seed, frame_rotation, options)
    result = solver.solve_links(poss, quats, init_qpos, seeds)
    if return_info:
        return result
    return (result.q, result.err) if return_error else result.q


def inverse_kinematics(model: KinematicModel, link: LinkRef, pos: object = None, quat: object = None,
                       local_point: object = None, init_qpos: object = None, respect_joint_limit: bool = True,
                       max_samples: int | None = None, max_solver_iters: int | None = None,
                       damping: float | None = None, pos_tol: float | None = None, rot_tol: float | None = None,
                       pos_mask=_ALL, rot_mask=_ALL, max_step_size: float | None = None,
                       dofs_idx_local: Sequence[int] | None = None, return_error: bool = False, *,
                       return_info: bool = False, **kwargs):
    """Joint positions that bring ``link`` (or ``local_point`` on it) to a target pose (Genesis's arguments).

    Args:
        link: Link name (or index).
        pos: Target position [m] in the base frame. Shape (3,) or (n, 3); None for orientation only.
        quat: Target (w, x, y, z) quaternion. Shape (4,) or (n, 4); None for position only.
        local_point: Point in the link frame to place at ``pos`` [m]. Shape (3,).
        init_qpos: Start. Shape (n_dofs,) or (n, n_dofs); default the mid-point of the limits;
            clipped into the limits.
        respect_joint_limit: False solves as if the joints were unlimited (the answer may leave them).
        max_samples: Attempts in all (our ``max_restarts`` + 1). max_solver_iters: iterations per attempt
            (``max_iters``). damping: the DLS lambda (lambda^2 floors our adaptive LM damping).
        pos_tol, rot_tol: Tolerances [m], [rad]. max_step_size: trust region of one step (``step_limit``,
            on the step's norm, so every DOF's step is within it too).
        pos_mask: Position axes to match (base frame, or ``frame_rotation``'s). rot_mask: link axes to
            align: 0, 1 or 3 True.
        dofs_idx_local: DOFs to solve; the others are held at ``init_qpos``.
        frame_rotation: (keyword) Rotation (3, 3) from the base frame to the frame in which pos_mask applies
            and errors are reported (the scene robot passes its environment's).
        return_info: (keyword) Return an :class:`IKResult`. Other keywords: :class:`IKOptions` fields
            (our names), ``seeds``, ``analytic_seed``, ``branch`` (app.ik.branch_choice: the answer on one
            closed-form branch, 0..7 or (shoulder, wrist flip, elbow); by default the branch nearest ``init_qpos``).
    Returns:
        q of shape ([n,] n_dofs); with ``return_error`` ``(q, err)``, err ([n,] 6) = position error
        [m] then rotation-vector error [rad]; with ``return_info`` an :class:`IKResult` (err ([n,] 6)).
    """
    if "local_points" in kwargs:
        raise InputError("inverse_kinematics takes local_point (one point on the link); "
                         "local_points is inverse_kinematics_multilink's")
    if kwargs.get("branch") is not None:
        branch = kwargs.pop("branch")
        result = on_branch(model, link, pos, quat, branch, init_qpos, lambda seed: inverse_kinematics(
            model, link, pos, quat, local_point, seed, respect_joint_limit, 1, max_solver_iters, damping, pos_tol,
            rot_tol, pos_mask, rot_mask, max_step_size, dofs_idx_local, return_info=True,
            **{**kwargs, "analytic_seed": False}), local_point)
        return result if return_info else (result.q, result.err) if return_error else result.q
    kwargs.pop("branch", None)
    result = inverse_kinematics_multilink(
        model, [link], [] if pos is None else [pos], [] if quat is None else [quat],
        None if local_point is None else [local_point], init_qpos, respect_joint_limit, max_samples, max_solver_iters,
        damping, pos_tol, rot_tol, pos_mask, rot_mask, max_step_size, dofs_idx_local, return_info=True,
        **kwargs).one_link()
    if return_info:
        return result
    return (result.q, result.err) if return_error else result.q
