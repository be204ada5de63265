"""Batched pose IK: Levenberg-Marquardt damped least squares with restarts.

Per problem (see :mod:`app.ik._lm` for the compiled loop): rotation rows of residual and
Jacobian weighted by a characteristic length; damping lambda^2 = mu (damping + |e_w|^2),
large far away and vanishing at the solution so that the last iterations are Gauss-Newton
and converge quadratically, with mu raised on a rejected step and lowered on an accepted
one; a trust-region cap on the step ([rad] for revolute DOFs, ``prismatic_step`` [m] per
radian for prismatic ones); DOFs pushing into a joint limit frozen for that step; iterates
clamped to the limits; a plateau of the score detected as a stall; restarts from caller
seeds, then from seeded random configurations inside the limits, only for the problems
that failed. The best configuration seen is returned; converged problems stop updating.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from app.errors import InputError
from app.ik._analytic_kernel import solve_seeded
from app.ik._lm import error_norms, pose_error_norms_kernel, solve_batch
from app.ik.cache import cached
from app.ik.ik_tables import ArmTables, LMOptions, TaskTables
from app.ik.targets import PoseTargets
from app.kernels.dispatch import kernel_array
from app.kinematics.model import KinematicModel
from app.validation import check_types

log = logging.getLogger(__name__)


MAX_ITERS = 100_000  # solver iterations per attempt: beyond any convergence; a bound, so a typo cannot run for hours
MAX_RESTARTS = 10_000  # random restarts per problem: each holds a start of n_dofs values (1e9 asked for 60 GiB)


@dataclass(frozen=True)
class IKOptions:
    """Solver settings. Tolerances in [m] and [rad]; ``char_length`` in [m].

    Attributes:
        pos_tol, rot_tol: Convergence tolerances on every link's position and rotation error.
        max_iters: Iterations per attempt (the first try and each restart).
        max_restarts: Random restarts allowed per problem after the first attempt and the seeds.
        char_length: Length that converts rotation errors to metres in the weighted residual.
        damping: Genesis's DLS damping lambda_0 [m]: lambda_0^2 is the floor added to |e_w|^2 in the
            LM damping lambda^2 = mu (lambda_0^2 + |e_w|^2), which vanishes at a solution only for 0.
        step_limit: Trust region: largest weighted step norm, [rad] for revolute DOFs.
        prismatic_step: What one radian of ``step_limit`` means for a prismatic DOF [m].
        stall_window: Iterations without ``stall_rtol`` relative progress that mean a stall.
        stall_rtol: Relative score decrease that counts as progress.
        seed: Seed of the random restart configurations.
        respect_joint_limit: Keep every iterate (and the answer) within the joint limits; False solves
            as if every joint were unlimited (Genesis's option; the answer may then leave the limits).
        warn: Log a warning when some target did not converge (the result says so per target either way;
            callers that try many candidates on purpose turn it off).

    Genesis's names are accepted by :meth:`from_kwargs`: ``max_solver_iters`` (= max_iters),
    ``max_samples`` (attempts in all = max_restarts + 1), ``max_step_size`` (= step_limit).
    """

    pos_tol: float = 1e-4
    rot_tol: float = 1e-3
    max_iters: int = 60
    max_restarts: int = 50
    char_length: float = 0.1
    damping: float = 1e-3
    step_limit: float = 0.5
    prismatic_step: float = 0.05
    stall_window: int = 5
    stall_rtol: float = 0.02
    seed: int = 0
    respect_joint_limit: bool = True
    warn: bool = True

    def __post_init__(self):
        check_types(self)  # each field of its annotated type (numbers finite), or InputError naming it
        for name in ("pos_tol", "rot_tol", "char_length", "step_limit", "prismatic_step", "stall_rtol"):
            if not getattr(self, name) > 0:
                raise InputError(f"{name} must be > 0, got {getattr(self, name)}")
        if not (self.max_iters <= MAX_ITERS and self.max_restarts <= MAX_RESTARTS):
            raise InputError(f"max_iters (Genesis: max_solver_iters) must be <= {MAX_ITERS} and max_restarts (Genesis: "
                             f"max_samples - 1) <= {MAX_RESTARTS}; got {self.max_iters}, {self.max_restarts}")
        if self.max_iters < 1 or self.max_restarts < 0 or self.damping < 0 or self.stall_window < 1 or self.seed < 0:
            raise InputError(f"max_iters (Genesis: max_solver_iters) and stall_window must be >= 1, max_restarts "
                             f">= 0, damping >= 0 and seed >= 0; got {self.max_iters}, {self.stall_window}, "
                             f"{self.max_restarts}, {self.damping}, {self.seed}")

    @classmethod
    def from_kwargs(cls, kwargs: dict) -> IKOptions:
        """Options from keyword arguments in our names or Genesis's (see the class docstring)."""
        kw = dict(kwargs)
        for genesis, ours, convert in GENESIS_OPTIONS:
            if genesis in kw:
                if ours in kw:
                    raise InputError(f"give {genesis} (Genesis's name) or {ours}, not both")
                kw[ours] = convert(kw.pop(genesis), genesis)
        unknown = set(kw) - set(cls.__dataclass_fields__)
        if unknown:
            valid = sorted(set(cls.__dataclass_fields__) | {g for g, _, _ in GENESIS_OPTIONS})
            raise InputError(f"unknown IK option(s) {sorted(unknown)}; valid: {valid}")
        return cls(**kw)


def _samples_to_restarts(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be an integer >= 1 (attempts in all), got {value!r}")
    return int(value) - 1


GENESIS_OPTIONS = (  # (Genesis's keyword, IKOptions field, conversion)
    ("max_samples", "max_restarts", _samples_to_restarts),
    ("max_solver_iters", "max_iters", lambda v, name: v),
    ("max_step_size", "step_limit", lambda v, name: v),
)


@dataclass(slots=True)  # made on every call: slots make it cheaper
class IKResult:
    """Outcome of a pose-IK call; arrays lead with the batch shape ``(...)`` of the call.

    Attributes:
        q: Best configuration found, within the joint limits. Shape (..., n_dofs).
        converged: FK of ``q`` meets both tolerances for every link. Shape (...).
        pos_err: Position error norm per link [m]. Shape (..., n_links); (...) from the one-link
            ``inverse_kinematics``, which drops the link axis as its ``err`` does.
        rot_err: Rotation error angle per link [rad] (masked). Shape as pos_err.
        err: Position error [m] then rotation-vector error [rad], masked parts zero. Shape (..., n_links, 6),
            or (..., 6) for one link.
        iters: Iterations used, all attempts together. Shape (...).
        restarts: Restarts used (seeds included). Shape (...).
    """

    q: np.ndarray
    converged: np.ndarray
    pos_err: np.ndarray
    rot_err: np.ndarray
    err: np.ndarray
    iters: np.ndarray
    restarts: np.ndarray
    batch_shape: tuple[int, ...] = field(default=(), repr=False)

    def one_link(self) -> IKResult:
        """The result of a one-link problem without its link axis (pos_err, rot_err (...), err (..., 6))."""
        return IKResult(self.q, self.converged, self.pos_err[..., 0], self.rot_err[..., 0], self.err[..., 0, :],
                        self.iters, self.restarts, self.batch_shape)


def _random_starts(model: KinematicModel, seed: int, count: int, free: tuple[bool, ...]) -> np.ndarray:
    """``count`` configurations uniform within the limits (+-pi where unlimited) from a generator seeded
    with ``seed``; NaN on held DOFs. Shape (1, count, n_dofs), read-only; kept in the model's cache."""
    return cached(model, ("random starts", seed, count, free), lambda: _draw_starts(model, seed, count, free))


def _draw_starts(model: KinematicModel, seed: int, count: int, free: tuple[bool, ...]) -> np.ndarray:
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    table = np.random.default_rng(seed).uniform(lo, hi, (count, model.n_dofs))
    table = np.ascontiguousarray(np.where(np.array(free), table, np.nan)[None])
    table.setflags(write=False)
    return table


def restart_points(model: KinematicModel, free: np.ndarray, options: IKOptions, seeds: np.ndarray | None,
                   batch: int) -> np.ndarray:
    """Seeds first, then random configurations within the limits (+-pi where unlimited); NaN marks
    held DOFs. Every problem gets the same random sequence, so a batch answers like single calls.
    Shape (B, S, n), or (1, S, n) when it is the same for every problem."""
    if seeds is None:
        return _random_starts(model, options.seed, options.max_restarts, tuple(free.tolist()))
    table = _random_starts(model, options.seed, options.max_restarts, (True,) * model.n_dofs)[0]
    seeds = np.asarray(seeds, dtype=float)
    lead = seeds.shape[0] if seeds.ndim == 3 else 1
    table = np.concatenate([np.broadcast_to(seeds, (lead,) + seeds.shape[-2:]),
                            np.broadcast_to(table, (lead,) + table.shape)], axis=1)
    table = np.ascontiguousarray(np.where(free, table, np.nan))
    table.setflags(write=False)  # as the cached table: one compiled variant of the loop (app.kernels.dispatch.kernel_array)
    return table


def run_kernel(model: KinematicModel, q_init, starts, tgt_pos, tgt_rot, task: TaskTables, free, opts: LMOptions,
               arm: ArmTables | None):
    """The compiled loop, seeded by the closed form when ``arm`` is given. Returns (q, err, iters, restarts)."""
    args = (q_init, starts, model.fk_tables, model.jacobian_tables, kernel_array(tgt_pos), kernel_array(tgt_rot),
            task, free, opts)
    if arm is not None:
        return solve_seeded(*args, arm)
    return solve_batch(*args, np.zeros((1, 1, model.n_dofs)), np.zeros(1, dtype=np.int64))


def lm_options(model: KinematicModel, options: IKOptions) -> LMOptions:
    """``options`` as the compiled loop takes them; the bounds are +-inf without ``respect_joint_limit``."""
    step_scale = np.where(model.revolute, 1.0, options.prismatic_step)
    unlimited = np.full(model.n_dofs, np.inf)
    q_lo, q_hi = (model.q_lower, model.q_upper) if options.respect_joint_limit else (-unlimited, unlimited)
    for arr in (step_scale, q_lo, q_hi):
        arr.setflags(write=False)
    return LMOptions(float(options.pos_tol), float(options.rot_tol), float(options.char_length),
                     float(options.damping) ** 2, float(options.step_limit), float(options.stall_rtol),
                     int(options.stall_window), int(options.max_iters), step_scale, q_lo, q_hi)


def result_of(q: np.ndarray, err: np.ndarray, options: IKOptions, iters: np.ndarray, restarts: np.ndarray,
              batch_shape: tuple[int, ...], one_link: bool = False) -> IKResult:
    """IKResult of batch shape ``batch_shape`` from configurations q (B, n_dofs) and their FK residuals
    err (B, n_links, 6), the link axis kept unless ``one_link`` (as :meth:`IKResult.one_link`). Warns on failures."""
    pos_err, rot_err, ok = error_norms(err, options.pos_tol, options.rot_tol)
    if options.warn and not ok.all():
        log.warning("IK did not converge for %d of %d targets (pos_tol=%g m, rot_tol=%g rad)",
                    int((~ok).sum()), ok.size, options.pos_tol, options.rot_tol)
    if one_link:
        pos_err, rot_err, err = pos_err[:, 0], rot_err[:, 0], err[:, 0]
    arrays = (q, ok, pos_err, rot_err, err, iters, restarts)
    if batch_shape != (q.shape[0],):
        arrays = tuple(a.reshape(batch_shape + a.shape[1:]) for a in arrays)
    return IKResult(*arrays, batch_shape)


def pose_error_norms(model: KinematicModel, q: np.ndarray, targets: PoseTargets) -> tuple[np.ndarray, np.ndarray]:
    """Masked position [m] and rotation [rad] error norms of configurations q (B, n_dofs) against targets of
    batch B (the one masked residual of the IK): shapes (B, n_links) each."""
    return pose_error_norms_of(model, q, targets.pos, targets.rot, targets.task_tables)


def pose_error_norms_of(model: KinematicModel, q: np.ndarray, pos: np.ndarray, rot: np.ndarray,
                        task: TaskTables) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pose_error_norms` for targets given as arrays, pos (B, n_links, 3) and rot (B, n_links, 3, 3)
    (C-contiguous float64), with the task tables of a PoseTargets built once (a control loop's every tick)."""
    pos_err, rot_err, _, _ = pose_error_norms_kernel(np.ascontiguousarray(q, dtype=float), model.fk_tables,
                                                     model.jacobian_tables, pos, rot, task)
    return pos_err, rot_err
