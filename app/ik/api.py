"""Genesis-style pose-IK entry points on a RobotModel: Genesis's arguments -> a prepared solver.

``inverse_kinematics`` (one link) and ``inverse_kinematics_multilink`` (several links, one
configuration satisfying all targets) take Genesis's arguments with Genesis's meaning: one
problem (``pos (3,)``) or a batch (``pos (n, 3)``) solved in one vectorised call; ``poss=[]``
or ``quats=[]`` (or a None entry) leaves that part unconstrained; ``local_points=[]`` means the
link origins; ``dofs_idx_local`` the DOFs to solve; Genesis's option names (``max_samples``,
``max_solver_iters``, ``max_step_size``, ``damping``, ``respect_joint_limit``) beside ours
(:class:`~app.ik.solver.IKOptions`). Both build (or reuse) one :class:`~app.ik.prepared.PoseIK`
and call it: there is one pipeline. ``init_qpos`` outside the joint limits is clipped into them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.errors import InputError
from app.ik.prepared import IKProblem, PoseIK, cached_solver
from app.ik.solver import IKOptions
from app.kinematics.model import LinkRef, RobotModel
from app.validation import as_vectors


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
        raise InputError(f"links must be a non-empty list of links (names, indices or scene links), got {links!r}")
    return [getattr(l, "idx_local", l) for l in links]


def _points_key(local_points: list) -> tuple | None:
    if all(p is None for p in local_points):
        return None
    return tuple(None if p is None else tuple(as_vectors(p, f"local_points[{i}]", 3).reshape(3).tolist())
                 for i, p in enumerate(local_points))


def _mask_key(mask: object, name: str) -> tuple:
    try:
        return tuple(bool(v) for v in mask)  # checked (length, values) when the solver is built
    except TypeError:
        raise InputError(f"{name} must be 3 booleans (x, y, z), got {mask!r}") from None


def inverse_kinematics_multilink(model: RobotModel, links: Sequence[LinkRef], poss: Sequence | None = None,
                                 quats: Sequence | None = None, *, local_points: Sequence | None = None,
                                 init_qpos: object = None, pos_mask=(True, True, True), rot_mask=(True, True, True),
                                 dofs_idx_local: Sequence[int] | None = None, return_error: bool = False,
                                 return_info: bool = False, seeds: np.ndarray | None = None,
                                 analytic_seed: bool = True, dofs_idx: Sequence[int] | None = None, **options):
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
        dofs_idx (alias of ``dofs_idx_local``), options: see :func:`inverse_kinematics`.
    Returns:
        q of shape ([n,] n_dofs); with ``return_error`` also err ([n,] n_links, 6); with
        ``return_info`` an :class:`IKResult` (link axis kept).
    """
    names = _link_list(links)
    poss, quats = link_entries(poss, len(names), "poss"), link_entries(quats, len(names), "quats")
    points = link_entries(local_points, len(names), "local_points")
    if dofs_idx is not None and dofs_idx_local is not None:
        raise InputError("give dofs_idx_local (Genesis's name) or dofs_idx, not both")
    dofs = dofs_idx_local if dofs_idx_local is not None else dofs_idx
    has_pos, has_rot = tuple(p is not None for p in poss), tuple(q is not None for q in quats)
    dofs_key = None if dofs is None else tuple(np.asarray(dofs).reshape(-1).tolist())
    key = (tuple(names), has_pos, has_rot, _points_key(points), _mask_key(pos_mask, "pos_mask"),
           _mask_key(rot_mask, "rot_mask"), dofs_key, bool(analytic_seed), tuple(sorted(options.items())))

    def build() -> PoseIK:
        return PoseIK(model, IKProblem(*key[:7], key[7], IKOptions.from_kwargs(options)))

    result = cached_solver(model, key, build).solve_links(poss, quats, init_qpos, seeds)
    if return_info:
        return result
    return (result.q, result.err) if return_error else result.q


def inverse_kinematics(model: RobotModel, link: LinkRef, pos: object = None, quat: object = None, *,
                       local_point: object = None, init_qpos: object = None, pos_mask=(True, True, True),
                       rot_mask=(True, True, True), analytic_seed: bool = True, return_error: bool = False,
                       return_info: bool = False, **kwargs):
    """Joint positions that bring ``link`` (or ``local_point`` on it) to a target pose.

    Args:
        link: Link name (or index).
        pos: Target position [m] in the base frame. Shape (3,) or (n, 3); None for orientation only.
        quat: Target (w, x, y, z) quaternion. Shape (4,) or (n, 4); None for position only.
        local_point: Point in the link frame to place at ``pos`` [m]. Shape (3,).
        init_qpos: Start. Shape (n_dofs,) or (n, n_dofs); default the mid-point of the limits;
            clipped into the limits.
        pos_mask: Base-frame position axes to match. rot_mask: link axes to align: 0, 1 or 3 True.
        dofs_idx_local: DOFs to solve; the others are held at ``init_qpos``.
        respect_joint_limit: False solves as if the joints were unlimited (Genesis).
        pos_tol, rot_tol, max_iters (Genesis: max_solver_iters), max_restarts (Genesis: max_samples,
            attempts in all), step_limit (Genesis: max_step_size), damping (Genesis's DLS lambda), seed,
            ...: :class:`IKOptions` fields.
    Returns:
        q of shape ([n,] n_dofs); with ``return_error`` ``(q, err)``, err ([n,] 6) = position error
        [m] then rotation-vector error [rad]; with ``return_info`` an :class:`IKResult` (err ([n,] 6)).
    """
    if "local_points" in kwargs:
        raise InputError("inverse_kinematics takes local_point (one point on the link); "
                         "local_points is inverse_kinematics_multilink's")
    result = inverse_kinematics_multilink(
        model, [link], [] if pos is None else [pos], [] if quat is None else [quat],
        local_points=None if local_point is None else [local_point], init_qpos=init_qpos, pos_mask=pos_mask,
        rot_mask=rot_mask, analytic_seed=analytic_seed, return_info=True, **kwargs).one_link()
    if return_info:
        return result
    return (result.q, result.err) if return_error else result.q

