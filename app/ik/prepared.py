"""A pose-IK problem prepared once and solved many times: the one path every IK call takes.

Everything that does not change between calls (links, masks, which links have position and
orientation targets, the free DOFs, the closed-form certificate, the restart table, the
solver options) is fixed at construction; :meth:`PoseIK.solve` only checks the targets and
runs the compiled loop. ``model.inverse_kinematics`` (and the multi-link and scene-robot
versions) keep recent solvers in the model's cache (app.ik.cache).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.errors import InputError
from app.ik._analytic_kernel import solve_seeded_kernel
from app.ik._lm import solve_batch_kernel
from app.ik._one_pose import one_pose_kernel
from app.ik.analytic import closed_form
from app.ik.chains import independent_groups
from app.ik.solver import IKOptions, IKResult, lm_options, restart_points, result_of, run_kernel
from app.ik.targets import PoseTargets, as_rows, batch_shape_of
from app.kernels.dispatch import entry_point, kernel_array
from app.kinematics.model import KinematicModel, LinkRef
from app.validation import as_rotation_matrices, as_vectors

_IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])


@dataclass(frozen=True)
class IKProblem:
    """What a prepared solver fixes. Hashable (the cache key).

    Attributes:
        links: Link names or indices, one per target. local_points: a point per link (link frame
            [m]) or None for its origin; None for all origins.
        has_pos, has_rot: Whether each link has a position / an orientation target.
        pos_mask, rot_mask: As in :func:`app.ik.api.inverse_kinematics`.
        dofs_idx: DOFs to solve (the others held at ``init_qpos``); None for all.
        analytic_seed: Start from closed-form branches where they apply.
        frame: Rows of the rotation from the base frame to the mask frame (see PoseTargets); None: identity.
        options: Solver settings.
    """

    links: tuple[LinkRef, ...]
    has_pos: tuple[bool, ...]
    has_rot: tuple[bool, ...]
    local_points: tuple | None = None
    pos_mask: tuple[bool, ...] = (True, True, True)
    rot_mask: tuple[bool, ...] = (True, True, True)
    dofs_idx: tuple[int, ...] | None = None
    analytic_seed: bool = True
    frame: tuple | None = None
    options: IKOptions = IKOptions()


def dof_indices(model: KinematicModel, dofs_idx: object) -> tuple[int, ...]:
    """``dofs_idx`` (a list, range or 1-D array of DOF indices) checked, as a tuple of ints."""
    idx = np.asarray(list(dofs_idx) if isinstance(dofs_idx, range) else dofs_idx)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise InputError(f"dofs_idx_local must be a non-empty list of integer DOF indices, got {dofs_idx!r:.80}")
    if idx.min() < 0 or idx.max() >= model.n_dofs:
        raise InputError(f"dofs_idx_local {idx.tolist()} out of range; valid: 0..{model.n_dofs - 1} "
                         f"for {list(model.dof_names)}")
    if len(np.unique(idx)) != len(idx):
        raise InputError(f"dofs_idx_local {idx.tolist()} names a DOF more than once: each DOF at most once")
    return tuple(int(i) for i in idx)


def free_dofs(model: KinematicModel, dofs_idx: Sequence[int] | None) -> np.ndarray:
    """Boolean mask of the DOFs to solve. Shape (n_dofs,)."""
    if dofs_idx is None:
        return np.ones(model.n_dofs, dtype=bool)
    free = np.zeros(model.n_dofs, dtype=bool)
    free[list(dof_indices(model, dofs_idx))] = True
    return free


class PoseIK:
    """Pose IK for fixed links, masks and options; targets change per call.

    Args:
        model: The robot.
        problem: What is fixed (see :class:`IKProblem`), or one link (name or index): then the
            keywords say the rest (``position_only`` for a solver without orientation targets).
    """

    def __init__(self, model: KinematicModel, problem: IKProblem | LinkRef, *, local_point=None,
                 pos_mask=(True, True, True), rot_mask=(True, True, True), position_only: bool = False,
                 analytic_seed: bool = True, options: IKOptions | None = None):
        if not isinstance(problem, IKProblem):  # one link: position and, unless position_only, orientation
            lp = None if local_point is None else (tuple(as_vectors(local_point, "local_point", 3).tolist()),)
            problem = IKProblem((problem,), (True,), (not position_only,), lp, tuple(pos_mask), tuple(rot_mask),
                                None, analytic_seed, None, options or IKOptions())
        self.model, self.problem, self.options = model, problem, problem.options
        self._template = PoseTargets.build(
            model, list(problem.links), [np.zeros(3) if p else None for p in problem.has_pos],
            [np.array([1.0, 0.0, 0.0, 0.0]) if r else None for r in problem.has_rot],
            None if problem.local_points is None else list(problem.local_points), problem.pos_mask, problem.rot_mask,
            frame=problem.frame)
        t = self._template
        self.n_links, self._task = len(problem.links), t.task_tables
        self._free = free_dofs(model, problem.dofs_idx)
        self._starts = restart_points(model, self._free, self.options, None, 1)
        self._lm_options = lm_options(model, self.options)
        self._lo, self._hi = self._lm_options.q_lo, self._lm_options.q_hi
        seeded = problem.analytic_seed and problem.dofs_idx is None and self.options.respect_joint_limit
        self._arm = closed_form(model, t) if seeded else None
        self._identity, self._mid = np.eye(3), model.mid_config()
        self._mid_row = self._mid.reshape(1, -1)
        self._entry = None  # the compiled one-problem loop, called directly once known (app.kernels.dispatch.entry_point)
        self._no_seeds = (np.zeros((1, 1, model.n_dofs)), np.zeros(1, dtype=np.int64))
        self._pose_args = None if self._arm is None or self.n_links != 1 or not (
            problem.has_pos[0] and problem.has_rot[0] and all(problem.pos_mask) and all(problem.rot_mask)) else (
            self._starts, model.fk_tables, model.jacobian_tables, np.zeros((1, 1, 3)), np.zeros((1, 1, 3, 3)),
            self._task, self._free, self._lm_options, self._arm)
        self._pose_entry = None  # solve_pose's compiled call, made at its first use (a solver that never takes it
        # compiles nothing more)
        groups = independent_groups(model, problem, self._free)  # links on chains that share no free DOF
        self._groups = None if groups is None else [
            (g, None if g.problem is None else PoseIK(g.model, g.problem)) for g in groups]

    def solve(self, pos: object = None, quat: object = None, init_qpos: object = None) -> IKResult:
        """One-link solve: pos ([n,] 3) [m], quat ([n,] 4) (w, x, y, z), from init_qpos ([n,] n_dofs).

        Returns an IKResult of batch shape () or (n,) without the link axis (err ([n,] 6)).
        """
        if self.n_links != 1:
            raise InputError(f"this solver has {self.n_links} links; use solve_links")
        if quat is None and self.problem.has_rot[0]:
            if any(self.problem.rot_mask):
                raise InputError("quat is required: this solver constrains the orientation (rot_mask)")
            quat = _IDENTITY_QUAT  # rot_mask all False: the orientation is free anyway
        return self.solve_links([pos], [quat], init_qpos, one_link=True)

    def solve_pose(self, pos: object, quat: object, init_qpos: object = None) -> tuple[np.ndarray, bool]:
        """One full-pose target of a one-link solver with a closed form (the WidowX family), in one compiled call:
        pos (3,) [m], quat (4,) (w, x, y, z), from init_qpos (n_dofs,) (default the mid-point) -> (q (n_dofs,),
        converged). The same answer as :meth:`solve` (the same loop), without its bookkeeping (no IKResult, no
        warning); anything else goes through :meth:`solve` and its errors (a batch: q (n, n_dofs), converged (n,))."""
        if self._pose_args is None:
            raise InputError("solve_pose solves one link's full pose with a closed form (a WidowX-family arm); "
                             "use solve")
        # C-contiguous float64: the compiled call is typed once, for these (a strided view would be read wrongly)
        p, r = np.ascontiguousarray(pos, dtype=float), np.ascontiguousarray(quat, dtype=float)
        q0 = self._mid_row if init_qpos is None else np.ascontiguousarray(init_qpos, dtype=float)
        if p.shape != (3,) or r.shape != (4,) or q0.shape not in ((self.model.n_dofs,), (1, self.model.n_dofs)):
            return self._solved(pos, quat, init_qpos)
        q0 = q0 if init_qpos is None else self._clip(self.model.check_q(q0, "init_qpos")).reshape(1, -1)
        if self._pose_entry is None:
            self._pose_entry = entry_point(one_pose_kernel, (p, r, q0, *self._pose_args))
        q, status = self._pose_entry(p, r, q0, *self._pose_args)
        if status < 0:
            return self._solved(pos, quat, init_qpos)  # raises the target's error
        return q, status == 1

    def _solved(self, pos: object, quat: object, init_qpos: object) -> tuple[np.ndarray, np.ndarray | bool]:
        """solve_pose's answer by :meth:`solve`: (q, converged), converged a bool or (n,) for a batch."""
        result = self.solve(pos, quat, init_qpos)
        return result.q, (bool(result.converged) if np.ndim(result.converged) == 0 else result.converged)

    def solve_links(self, poss: Sequence, quats: Sequence, init_qpos: object = None,
                    seeds: np.ndarray | None = None, one_link: bool = False) -> IKResult:
        """Solve for one target per link: poss[i] ([n,] 3) or None, quats[i] ([n,] 4) or None, as the
        problem's ``has_pos``/``has_rot`` say; init_qpos ([n,] n_dofs); seeds ([n,] k, n_dofs) tried after
        init_qpos, before the random restarts. Returns an IKResult with the link axis (err ([n,] n_links, 6)), or
        without it for a one-link solver asked ``one_link`` (err ([n,] 6))."""
        pb = self.problem
        for name, given, expected in (("poss", poss, pb.has_pos), ("quats", quats, pb.has_rot)):
            for i, (g, e) in enumerate(zip(given, expected)):
                if (g is not None) != e:
                    raise InputError(f"{name}[{i}] is {'required' if e else 'not taken'} by this solver "
                                     f"(prepared for {name} given where {list(expected)})")
        one_link = one_link and self.n_links == 1
        if self._groups is not None:
            return self._solve_groups(poss, quats, init_qpos, seeds)
        if self.n_links == 1 and seeds is None and pb.has_pos[0]:
            return self._one_link(poss[0], quats[0], init_qpos, one_link)
        q0 = None if init_qpos is None else self.model.check_q(init_qpos, "init_qpos")
        hint = () if q0 is None else q0.shape[:-1]
        targets = PoseTargets.build(self.model, list(pb.links), list(poss), list(quats),
                                    None if pb.local_points is None else list(pb.local_points), pb.pos_mask,
                                    pb.rot_mask, hint, frame=pb.frame)
        batch = self._batch([targets.batch_shape, hint])
        q_init = self._mid if q0 is None else q0
        q_init = self._clip(as_rows(q_init, batch, (self.model.n_dofs,)))
        starts = None
        if seeds is not None:
            seeds = as_float_array_seeds(seeds, self.model.n_dofs, batch)
            starts = restart_points(self.model, self._free, self.options, seeds, q_init.shape[0])
        return self._run(batch, q_init, targets.pos, targets.rot, starts, one_link)

    def solve_rows(self, q0: np.ndarray, pos: np.ndarray, rot: np.ndarray) -> IKResult:
        """:meth:`solve_links` for a loop that checks its arrays itself (a controller's every tick), with the same
        answers: q0 (B, n_dofs) finite, pos (B, n_links, 3) finite and rot (B, n_links, 3, 3) rotation matrices,
        C-contiguous float64, for a problem with a position and an orientation target on every link. Returns an
        IKResult of batch shape (B,) with the link axis."""
        if not (all(self.problem.has_pos) and all(self.problem.has_rot)):
            raise InputError("solve_rows takes a position and an orientation for every link; use solve_links")
        if self._groups is not None:
            return self._solve_groups_by(q0, lambda g, solver, q0g: solver.solve_rows(
                q0g, np.ascontiguousarray(pos[:, list(g.targets)]), np.ascontiguousarray(rot[:, list(g.targets)])))
        return self._run((len(q0),), self._clip(q0), pos, rot, None)

    def _solve_groups(self, poss: Sequence, quats: Sequence, init_qpos: object, seeds: object) -> IKResult:
        """solve_links by independent sub-problems (app.ik.chains), merged into the whole problem's result."""
        q0 = None if init_qpos is None else self.model.check_q(init_qpos, "init_qpos")
        seeds = None if seeds is None else as_vectors(seeds, "seeds", self.model.n_dofs)

        def solve(group, solver, q0g):
            seeds_g = None if seeds is None else np.ascontiguousarray(seeds[..., group.dofs])
            return solver.solve_links([poss[i] for i in group.targets], [quats[i] for i in group.targets], q0g,
                                      seeds_g)
        return self._solve_groups_by(q0, solve)

    def _solve_groups_by(self, q0: np.ndarray | None, solve) -> IKResult:
        """Every independent sub-problem solved by ``solve(group, solver, its DOFs of q0 or None)``, the results
        merged into the whole problem's."""
        results = []
        for group, solver in self._groups:
            if solver is not None:
                results.append(solve(group, solver, None if q0 is None else np.ascontiguousarray(q0[..., group.dofs])))
        batch = batch_shape_of([r.batch_shape for r in results] + [() if q0 is None else q0.shape[:-1]])
        rows = math.prod(batch)
        q = self._clip(as_rows(self._mid if q0 is None else q0, batch, (self.model.n_dofs,))).copy()
        err = np.zeros((rows, self.n_links, 6))
        iters, restarts = np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=np.int64)
        solved = (g for g, solver in self._groups if solver is not None)
        for group, r in zip(solved, results):
            q[:, group.dofs] = as_rows(r.q, batch, (len(group.dofs),))
            err[:, list(group.targets)] = as_rows(r.err, batch, (len(group.targets), 6))
            iters += as_rows(r.iters, batch, ())
            restarts = np.maximum(restarts, as_rows(r.restarts, batch, ()))
        return result_of(q, err, self.options, iters, restarts, batch)

    def _one_link(self, pos: object, quat: object, init_qpos: object, one_link: bool) -> IKResult:
        """solve_links for one link with a position target, without the general bookkeeping."""
        p = as_vectors(pos, "pos", 3)
        rot = self._identity if quat is None else as_rotation_matrices(quat, "quat")
        q0 = self._mid if init_qpos is None else self.model.check_q(init_qpos, "init_qpos")
        if p.ndim == 1 and rot.ndim == 2 and q0.ndim == 1:  # one problem: the common call, kept short
            tgt_pos, tgt_rot = np.ascontiguousarray(p.reshape(1, 1, 3)), rot.reshape(1, 1, 3, 3)
            q0 = self._mid_row if init_qpos is None else self._clip(q0).reshape(1, -1)
            return self._run((), q0, tgt_pos, tgt_rot, None, one_link)
        batch = self._batch([p.shape[:-1], rot.shape[:-2], q0.shape[:-1]])
        tgt_pos = np.ascontiguousarray(as_rows(p[..., None, :], batch, (1, 3)))  # (n, 1 link, 3)
        tgt_rot = np.ascontiguousarray(as_rows(rot[..., None, :, :], batch, (1, 3, 3)))
        q0 = self._clip(as_rows(q0, batch, (self.model.n_dofs,)))
        return self._run(batch, q0, tgt_pos, tgt_rot, None, one_link)

    def _batch(self, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
        return shapes[0] if all(s == shapes[0] for s in shapes) and len(shapes[0]) <= 1 else batch_shape_of(shapes)

    def _clip(self, q: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(q, self._lo), self._hi)

    def _run(self, batch, q0, tgt_pos, tgt_rot, starts, one_link: bool = False) -> IKResult:
        q0 = np.ascontiguousarray(q0, dtype=float)
        if starts is None and q0.shape[0] == 1:  # one problem, on this thread: the compiled code called directly
            q, err, iters, restarts = self._one_problem(q0, kernel_array(tgt_pos), kernel_array(tgt_rot))
        else:
            q, err, iters, restarts = run_kernel(self.model, q0, self._starts if starts is None else starts, tgt_pos,
                                                 tgt_rot, self._task, self._free, self._lm_options, self._arm)
        return result_of(q, err, self.options, iters, restarts, batch, one_link)

    def _one_problem(self, q0: np.ndarray, tgt_pos: np.ndarray, tgt_rot: np.ndarray) -> tuple:
        """The compiled loop for one problem (q0 (1, n), targets (1, T, ...), all C-contiguous float64)."""
        m = self.model
        args = (q0, self._starts, m.fk_tables, m.jacobian_tables, tgt_pos, tgt_rot, self._task, self._free,
                self._lm_options) + ((self._arm,) if self._arm is not None else self._no_seeds)
        if self._entry is None:
            self._entry = entry_point(solve_seeded_kernel if self._arm is not None else solve_batch_kernel, args)
        return self._entry(*args)


def as_float_array_seeds(seeds: object, n_dofs: int, batch: tuple[int, ...]) -> np.ndarray:
    """Seeds as (k, n_dofs) or (n, k, n_dofs) matching the batch; InputError otherwise."""
    arr = as_vectors(seeds, "seeds", n_dofs)
    if arr.ndim == 2 or (arr.ndim == 3 and batch and arr.shape[0] == batch[0]):
        return arr
    raise InputError(f"seeds must have shape (k, {n_dofs}) or ({batch[0] if batch else 'n'}, k, {n_dofs}), "
                     f"got {arr.shape}")
