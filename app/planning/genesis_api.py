"""Genesis's ``plan_path`` for a scene-free model: Genesis's argument names, order, defaults and shapes.

Differences, each on purpose: ``timeout=None`` means :data:`DEFAULT_TIMEOUT` (OMPL searches within a time budget;
``max_nodes`` is accepted and not used); a failed plan returns the start configuration repeated (Genesis returns
zeros, which a caller streaming the path would drive the arm to); the collision world comes as ``world`` (or a
ready ``collision`` model), there being no scene; ``with_entity`` / ``ee_link_name`` (an attached object) are not
taken here: give a World with ``held`` instead.
"""

from __future__ import annotations

import numpy as np

from app.collision.world import World
from app.errors import InputError
from app.planning.planner import PlanOptions, PlanResult, plan
from app.planning.shortcut import resample

DEFAULT_TIMEOUT = 5.0  # [s]


def plan_path(model, qpos_goal, qpos_start=None, max_nodes: int = 2000, resolution: float = 0.05,
              timeout: float | None = None, max_retry: int = 1, smooth_path: bool = True,
              num_waypoints: int | None = 300, ignore_collision: bool = False, planner: str = "RRTConnect",
              return_valid_mask: bool = False, *, world: World | None = None, collision=None,
              min_distance: float = 0.0, dofs_idx_local=None, seed: int = 0, return_result: bool = False):
    """Plan a path from ``qpos_start`` to ``qpos_goal`` (Genesis's ``RigidEntity.plan_path``, scene-free).

    Args:
        qpos_goal: (n_dofs,), or (B, n_dofs) for B separate problems (Genesis's [B, Nq]).
        qpos_start: same shape as qpos_goal, or (n_dofs,) for all; None: the mid configuration.
        resolution: [rad] the largest per-DOF step between checked states of an edge.
        timeout: [s] per search (None: DEFAULT_TIMEOUT). max_retry: searches after a failed one.
        smooth_path: shortcut the path. num_waypoints: points the path is resampled to (arc length, every
            corner kept when there are enough); None: the planned waypoints as they are (with (B, n_dofs) goals
            a number is needed, to stack them).
        planner: an OMPL planner name (app.planning.PLANNERS), "RRTConnect" by default.
        return_valid_mask: also return whether each plan succeeded.
        world / collision: what to avoid; min_distance [m]; dofs_idx_local: the planned DOFs (None: revolute ones).
        return_result: return the PlanResult(s) (with their ``reason``) instead.
    Returns:
        path (num_waypoints, n_dofs) for one problem, (num_waypoints, B, n_dofs) for B; with return_valid_mask,
        ``(path, valid)``: valid a bool, or (B,) bools.
    """
    del max_nodes  # Genesis's node budget: OMPL's search is bounded by the timeout instead
    goals = np.asarray(qpos_goal, dtype=float)
    n = model.n_dofs
    if goals.ndim not in (1, 2) or goals.shape[-1] != n:
        raise InputError(f"qpos_goal must have shape ({n},) or (B, {n}), got {goals.shape}")
    batch = goals.ndim == 2
    goals = np.atleast_2d(goals)
    starts = _starts(model, qpos_start, len(goals))
    if batch and num_waypoints is None and len(goals) > 1:
        raise InputError("num_waypoints=None returns paths of their own lengths: give a number for (B, n) goals")
    check_waypoints(num_waypoints)
    opts = genesis_options(planner, timeout, resolution, smooth_path, max_retry, min_distance, seed, ignore_collision)
    results = [plan(model, g, s, world=world, collision=collision, dofs_idx_local=dofs_idx_local, options=opts)
               for g, s in zip(goals, starts)]
    if return_result:
        return results if batch else results[0]
    paths = [waypoints(r, s, num_waypoints) for r, s in zip(results, starts)]
    valid = np.array([r.success for r in results])
    path = np.stack(paths, axis=1) if batch else paths[0]
    if return_valid_mask:
        return path, (valid if batch else bool(valid[0]))
    return path


def check_waypoints(num_waypoints: object) -> None:
    """InputError unless ``num_waypoints`` is an integer >= 2 or None."""
    if num_waypoints is not None and (isinstance(num_waypoints, bool) or not isinstance(num_waypoints, (int, np.integer))
                                      or num_waypoints < 2):
        raise InputError(f"num_waypoints must be an integer >= 2 or None, got {num_waypoints!r}")


def genesis_options(planner: str, timeout: float | None, resolution: float, smooth_path: bool, max_retry: int,
                    min_distance: float, seed: int, ignore_collision: bool) -> PlanOptions:
    """PlanOptions from Genesis's arguments (``timeout`` None: DEFAULT_TIMEOUT), checked by PlanOptions."""
    for name, value in (("timeout", timeout), ("resolution", resolution), ("min_distance", min_distance)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))):
            raise InputError(f"{name} must be a number, got {value!r:.40}")
    if isinstance(max_retry, bool) or not isinstance(max_retry, (int, np.integer)) or max_retry < 0:
        raise InputError(f"max_retry must be an integer >= 0, got {max_retry!r:.40}")
    return PlanOptions(planner=planner, timeout=DEFAULT_TIMEOUT if timeout is None else float(timeout),
                       resolution=float(resolution), smooth_path=bool(smooth_path), max_retry=int(max_retry),
                       min_distance=float(min_distance), seed=int(seed), ignore_collision=bool(ignore_collision))


def _starts(model, qpos_start, count: int) -> np.ndarray:
    if qpos_start is None:
        return np.repeat(model.mid_config()[None], count, axis=0)
    starts = model.check_q(qpos_start, "qpos_start")
    if starts.ndim == 1:
        return np.repeat(starts[None], count, axis=0)
    if starts.shape != (count, model.n_dofs):
        raise InputError(f"qpos_start must have shape ({model.n_dofs},) or ({count}, {model.n_dofs}) like "
                         f"qpos_goal, got {starts.shape}")
    return starts


def waypoints(result: PlanResult, start: np.ndarray, num_waypoints: int | None) -> np.ndarray:
    """The plan's path (start repeated where it failed) as ``num_waypoints`` rows (None: as planned)."""
    path = result.path if result.success else start[None]
    return path if num_waypoints is None else resample(path, int(num_waypoints))
