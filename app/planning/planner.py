"""plan(): start and goal (joints or poses) -> a collision-free joint path, or a typed failure with its reason.

Steps: check the start; turn the goal into valid goal configurations; search with OMPL (edges at
``resolution``); shortcut; re-check the final path densely (``check_resolution``). A path failing the dense
check is not returned: the search runs again at half the resolution (``max_retry`` times).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from app.collision.build import collision_model
from app.collision.checker import MAX_CLEARANCE, CollisionModel
from app.collision.world import World
from app.errors import InputError
from app.planning.goals import (
    GoalSet,
    PoseGoal,
    check_pose_goal,
    is_pose_goal,
    joint_goal_array,
    joint_goals,
    pose_goals,
)
from app.planning.ompl_backend import check_planner, search
from app.planning.shortcut import drop_collinear, path_length, shortcut
from app.planning.space import PlanningSpace, planned_dofs
from app.validation import seed_problem

log = logging.getLogger(__name__)

# [rad] the planner's range by default: the longest edge RRT-Connect adds (Euclidean over the planned DOFs). OMPL's
# own (a fifth of the space's extent) adds long edges that clutter mostly refuses whole, and RRT-Connect keeps
# nothing of a refused edge (figures: docs/planning.md)
DEFAULT_STEP = 0.3

REASONS = ("success", "start_in_collision", "goal_in_collision", "no_ik_goal", "timeout", "path_in_collision")


BOUNDS = {  # each search's time [s] and edge steps [rad]: a search of an hour, or steps of a nanoradian (1e9 checks
    # per radian), is a typo, refused before any work
    "timeout": (1e-6, 600.0), "resolution": (1e-4, 1.0), "check_resolution": (1e-5, 1.0)}
MAX_RETRY = 100  # searches after a failed one, and goal configurations tried
MAX_SHORTCUTS = 10_000  # shortcut attempts on a path (each checks a new edge densely)


@dataclass(frozen=True)
class PlanOptions:
    """planner: OMPL planner (ompl_backend.PLANNERS); timeout [s] per search; resolution [rad]: per-DOF step
    between checked configurations while searching and shortcutting; check_resolution [rad]: the same for the
    final dense re-check; min_distance [m]: clearance by the spheres; self_min_distance [m]: the clearance
    between links of one arm instead (None: min_distance; 0: contact, as the controllers allow); smooth_path: shortcut; shortcut_attempts;
    max_retry: searches after a failed one; max_goals: IK goals kept; seed: shortcutting's and IK's seed;
    ignore_collision: bounds only (Genesis's option); step [rad]: the planner's range, the longest edge it adds
    (DEFAULT_STEP; None: OMPL's default, a fifth of the space's extent)."""

    planner: str = "RRTConnect"
    timeout: float = 5.0
    resolution: float = 0.05
    check_resolution: float = 0.001  # [rad]: the final path checked at <= 1 mrad steps (as the PyBullet referee)
    min_distance: float = 0.0
    self_min_distance: float | None = None
    smooth_path: bool = True
    shortcut_attempts: int = 60
    max_retry: int = 1
    max_goals: int = 16
    seed: int = 0
    ignore_collision: bool = False
    step: float | None = DEFAULT_STEP

    def __post_init__(self):
        check_planner(self.planner)
        for name, (lo, hi) in BOUNDS.items():
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and lo <= value <= hi):
                raise InputError(f"{name} must be a number in [{lo:g}, {hi:g}], got {value!r}")
        if self.step is not None and not (isinstance(self.step, (int, float)) and np.isfinite(self.step)
                                          and self.step > 0):
            raise InputError(f"step must be None or a finite number > 0 [rad], got {self.step!r}")
        if not (np.isfinite(self.min_distance) and 0 <= self.min_distance <= MAX_CLEARANCE):
            raise InputError(f"min_distance must be a clearance in [0, {MAX_CLEARANCE:g}] m, got {self.min_distance!r}")
        if self.self_min_distance is not None and not (np.isfinite(self.self_min_distance)
                                                       and 0 <= self.self_min_distance <= MAX_CLEARANCE):
            raise InputError(f"self_min_distance must be None or a clearance in [0, {MAX_CLEARANCE:g}] m, got "
                             f"{self.self_min_distance!r}")
        if not 0 <= int(self.shortcut_attempts) <= MAX_SHORTCUTS:
            raise InputError(f"shortcut_attempts must be in [0, {MAX_SHORTCUTS}], got {self.shortcut_attempts}")
        if seed_problem(self.seed) is not None:
            raise InputError(f"seed {seed_problem(self.seed)}")
        if not (0 <= int(self.max_retry) <= MAX_RETRY and 1 <= int(self.max_goals) <= MAX_RETRY):
            raise InputError(f"max_retry must be in [0, {MAX_RETRY}] and max_goals in [1, {MAX_RETRY}], got "
                             f"{self.max_retry}, {self.max_goals}")


class PlanResult(NamedTuple):
    """success; reason (one of REASONS); path (N, n_dofs) the final waypoints (empty on failure); raw_path
    (M, n_dofs) the search's before shortcutting; goals (G, n_dofs) the goal configurations offered; seconds:
    wall time of the whole call [s]; length, raw_length: joint-space lengths [rad]; detail: a sentence."""

    success: bool
    reason: str
    path: np.ndarray
    raw_path: np.ndarray
    goals: np.ndarray
    seconds: float
    length: float
    raw_length: float
    detail: str = ""


def model_collision(model, world: World | None, collision: CollisionModel | None) -> CollisionModel:
    """``collision`` if given, else the model's sphere model against ``world``, kept on the model per world."""
    if collision is not None:
        if not isinstance(collision, CollisionModel):
            raise InputError(f"collision must be an app.collision.CollisionModel, got {type(collision).__name__}")
        return collision
    world = World() if world is None else world
    if not isinstance(world, World):
        raise InputError(f"world must be an app.collision.World, got {type(world).__name__}")
    cache = getattr(model, "solver_cache", None)
    try:
        key = ("planning collision", hash(world))
    except TypeError:  # a world with arrays inside (moving objects): not cached
        return collision_model(model, world)
    if cache is None:
        return collision_model(model, world)
    if key not in cache:
        cache[key] = collision_model(model, world)
    return cache[key]


def path_check(model, collision: CollisionModel, options: PlanOptions) -> Callable[[np.ndarray], np.ndarray]:
    """What plan()'s dense re-check asks of a configuration, as a check of full configurations (K, n_dofs) ->
    (K,) bool: inside the joint windows, and clear by ``options``' margins (min_distance for every pair, or
    self_min_distance within an arm) unless it ignores collisions; for timing that leaves the planned edges
    (app.planning.timing.time_parameterize's ``valid``)."""
    margins = options.min_distance if options.self_min_distance is None else \
        collision.margins(options.min_distance, self_margin=options.self_min_distance)
    lower, upper = model.q_lower - 1e-9, model.q_upper + 1e-9

    def valid(q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        inside = ((q >= lower) & (q <= upper)).all(axis=-1)
        return inside if options.ignore_collision else inside & collision.clear(q, margins)

    return valid


def check_request(model, goal, q_start=None, dofs_idx_local=None) -> np.ndarray:
    """What plan() checks of its request before any work (:func:`check_start`, :func:`check_goal`); returns the
    start (n_dofs,)."""
    q0 = check_start(model, q_start)
    check_goal(model, goal, dofs_idx_local)
    return q0


def check_start(model, q_start=None) -> np.ndarray:
    """The start (n_dofs,) inside the joint windows (None: the mid configuration). Raises InputError."""
    q0 = model.mid_config() if q_start is None else model.check_window(model.check_q(q_start, "qpos_start"),
                                                                       "qpos_start")
    if q0.shape != (model.n_dofs,):
        raise InputError(f"qpos_start must have shape ({model.n_dofs},), got {q0.shape}")
    return q0


def check_goal(model, goal, dofs_idx_local=None) -> None:
    """The planned DOFs, and the goal: joints inside the windows of a shape plan() takes, or pose goals with an
    existing link, a nonzero quaternion and masks Genesis allows. Raises InputError / UnknownNameError."""
    dofs = planned_dofs(model, dofs_idx_local)
    if is_pose_goal(goal):
        for g in [goal] if isinstance(goal, PoseGoal) else goal:
            check_pose_goal(model, g)
    else:
        joint_goal_array(model, dofs, goal)


def _failure(space: PlanningSpace, reason: str, t0: float, detail: str, goals: np.ndarray | None = None,
             raw: np.ndarray | None = None) -> PlanResult:
    n = space.model.n_dofs
    log.debug("planning failed: %s (%s)", reason, detail)  # the callers name what failed (a problem, an environment)
    empty = np.zeros((0, n))
    return PlanResult(False, reason, empty, empty if raw is None else space.full(raw),
                      empty if goals is None else space.full(goals), time.perf_counter() - t0, 0.0,
                      0.0 if raw is None else path_length(raw), detail)


def _goal_set(space: PlanningSpace, goal, q_start: np.ndarray, opts: PlanOptions) -> GoalSet:
    if is_pose_goal(goal):
        return pose_goals(space, goal, q_start, opts.max_goals, seed=opts.seed)
    return joint_goals(space, goal)


def plan(model, goal, q_start=None, *, world: World | None = None, collision: CollisionModel | None = None,
         dofs_idx_local=None, options: PlanOptions | None = None) -> PlanResult:
    """A collision-free path for ``model`` from ``q_start`` to ``goal``.

    Args:
        goal: joint values (n_active,) / (n_dofs,), several (G, ...) (any may be reached), or a PoseGoal, or
            one PoseGoal per arm.
        q_start: (n_dofs,) [rad, m]; None: the mid configuration. The DOFs not planned keep their values.
        world / collision: what to avoid (a World, or a ready CollisionModel of this model).
        dofs_idx_local: the planned DOFs (None: every revolute DOF; grippers' fingers held).
    Returns:
        PlanResult; failures are results with a ``reason``, never exceptions.
    Raises:
        InputError (wrong shapes, NaN, values outside the joint windows, bad options), UnknownNameError
        (unknown planner or link).
    """
    t0 = time.perf_counter()
    opts = options or PlanOptions()
    q0 = check_request(model, goal, q_start, dofs_idx_local)
    cm = model_collision(model, world, collision)
    space = PlanningSpace(model, cm, q0, dofs_idx_local, opts.resolution, opts.min_distance, opts.ignore_collision)
    if opts.self_min_distance is not None:
        space.margins = cm.margins(opts.min_distance, self_margin=opts.self_min_distance)
    start = space.active(q0)
    if not space.valid(start[None])[0]:
        d, _ = cm.distances(q0[None], with_gradient=False)
        return _failure(space, "start_in_collision", t0, f"closest pair {cm.closest(d, space.margins)[0]}")
    goals = _goal_set(space, goal, q0, opts)
    if goals.reason is not None:
        return _failure(space, goals.reason, t0, goals.detail)
    return _search_loop(space, start, goals.q, opts, t0)


def _candidates(space: PlanningSpace, raw: np.ndarray, opts: PlanOptions, attempt: int):
    """The paths offered to the dense re-check, best first: the shortcut path; where it fails, the raw path
    shortcut again with every new edge checked at a quarter of the resolution (a shortcut edge checked coarsely
    may dip under the clearance between its checked configurations); last the raw path itself, its collinear
    waypoints dropped (the same motion: the search's extensions along one line are separate edges)."""
    if opts.smooth_path:
        yield shortcut(space, raw, opts.shortcut_attempts, opts.seed + attempt)
        coarse = space.resolution
        space.resolution = coarse / 4
        try:
            yield shortcut(space, raw, opts.shortcut_attempts, opts.seed + attempt)
        finally:
            space.resolution = coarse
    yield drop_collinear(raw)


def _search_loop(space: PlanningSpace, start: np.ndarray, goals: np.ndarray, opts: PlanOptions,
                 t0: float) -> PlanResult:
    raw = None
    for attempt in range(1 + int(opts.max_retry)):
        found = search(space, start, goals, opts.planner, opts.timeout, opts.seed + attempt, step=opts.step)
        if found.path is None:
            continue
        raw = found.path
        for candidate in _candidates(space, raw, opts, attempt):
            if space.path_valid(candidate, opts.check_resolution).all():
                return PlanResult(True, "success", space.full(candidate), space.full(raw), space.full(goals),
                                  time.perf_counter() - t0, path_length(candidate), path_length(raw))
        log.info("path failed its dense re-check; searching again at half the resolution")
        space.resolution /= 2
    if raw is None:
        return _failure(space, "timeout", t0, f"{opts.planner} found no path in {opts.timeout} s "
                        f"({1 + int(opts.max_retry)} searches)", goals)
    return _failure(space, "path_in_collision", t0, "every path found failed the dense re-check", goals, raw)
