"""Genesis's ``RigidEntity.plan_path`` for a scene robot: one path per environment at once, each environment
planned against its own objects where they are now, Genesis's argument names, order, defaults and shapes.

Genesis calls it on the entity (``robot.plan_path(qpos_goal, ...)``); here the robot comes first
(``plan_path(robot, qpos_goal, ...)``): the scene robot lives in app.sim, which may not import the planner
(tests/test_layers.py), so the robot hands over each environment's collision world
(:meth:`SceneRobot.planning_collisions`) and this function plans. Differences from Genesis, each on purpose:

- ``timeout=None`` means app.planning.genesis_api.DEFAULT_TIMEOUT per search and ``max_nodes`` is not used (OMPL
  searches within a time budget); ``max_retry`` searches follow a failed one, as in Genesis.
- A failed environment's path is its start repeated (Genesis's is zeros where every environment fails, which a
  caller streaming the path would drive the arm to); ``return_valid_mask`` says which failed.
- Validity is our sphere model (app.collision) against the scene's boxes and objects, ``min_distance`` [m] apart
  (0 by default), the robot's sampled self pairs; other robots of the scene are not obstacles. Genesis leaves
  out every contact the robot has at the start and the goal; here a start or goal in contact fails that
  environment (``start_in_collision`` / ``goal_in_collision`` in ``return_result``'s reasons), except an
  attached object's contacts with the robot's links at the start (its fingers); an attached object resting on
  the table at the start is in collision: lift it clear first.
- The DOFs planned are the revolute ones (``dofs_idx_local``: others); the rest (a gripper's fingers) keep their
  start values along the path, whatever ``qpos_goal`` says of them.
"""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np

from app.collision.checker import CollisionModel
from app.errors import InputError
from app.planning.genesis_api import check_waypoints, genesis_options, waypoints
from app.planning.planner import PlanResult, plan
from app.validation import as_float_array, check_finite

log = logging.getLogger(__name__)


class SceneRobot(Protocol):
    """What :func:`plan_path` needs of a scene robot (app.sim.robot.Robot is one)."""

    model: object  # app.RobotModel
    batched: bool  # built with n_envs: arrays lead with one row per addressed environment

    def get_qpos(self, qs_idx_local: object = None, envs_idx: object = None) -> np.ndarray:
        """Joint positions now, ([n_envs,] n_dofs)."""

    def planning_collisions(self, envs_idx: object = None, ee_link_name: str | None = None,
                            with_entity: object = None) -> dict[int, CollisionModel]:
        """Per addressed environment, its index -> the robot's spheres against that environment's world now."""


def _rows(value: object, name: str, count: int, width: int, batched: bool) -> np.ndarray:
    """A per-environment array as (count, width): (count, width) in a batched scene, or one row (width,) for every
    addressed environment (Genesis broadcasts it); only (width,) in an unbatched one."""
    arr = check_finite(as_float_array(value, name), name)
    if arr.shape == (width,):
        return np.repeat(arr[None], count, axis=0)
    if batched and arr.shape == (count, width):
        return arr
    expected = f"({count}, {width}) (one row per environment addressed) or ({width},)" if batched else f"({width},)"
    raise InputError(f"{name} must have shape {expected}, got {arr.shape}")


def plan_path(robot: SceneRobot, qpos_goal, qpos_start=None, max_nodes: int = 2000, resolution: float = 0.05,
              timeout: float | None = None, max_retry: int = 1, smooth_path: bool = True,
              num_waypoints: int | None = 300, ignore_collision: bool = False, planner: str = "RRTConnect",
              envs_idx=None, return_valid_mask: bool = False, *, ee_link_name: str | None = None,
              with_entity=None, min_distance: float = 0.0, dofs_idx_local=None, seed: int = 0,
              return_result: bool = False):
    """Plan a path from ``qpos_start`` to ``qpos_goal`` in every addressed environment (Genesis's
    ``RigidEntity.plan_path`` on ``robot``).

    Args:
        robot: the scene robot after ``scene.build`` (:class:`SceneRobot`).
        qpos_goal: ([n_envs,] n_dofs) [rad, m], one row per addressed environment, or (n_dofs,) for all.
        qpos_start: shaped as qpos_goal; None: each environment's joints now (Genesis's meaning).
        resolution: [rad] the largest per-DOF step between checked states of an edge.
        timeout: [s] per search (None: DEFAULT_TIMEOUT). max_retry: searches after a failed one.
        smooth_path: shortcut the path. num_waypoints: rows each path is resampled to (arc length, corners kept
            when there are enough); None: as planned (one environment addressed only).
        ignore_collision: joint bounds only. planner: an OMPL planner name (app.planning.PLANNERS).
        envs_idx: the environments planned (None: all; only None in a scene built without n_envs).
        return_valid_mask: also return which environments' plans succeeded.
        ee_link_name / with_entity: a link and a scene object (or its name) it carries: the object moves with the
            link at its relative pose now in each environment; both or neither.
        min_distance: [m] clearance kept by the spheres; dofs_idx_local: the planned DOFs (None: revolute ones);
        seed: the searches' seed (the same for every environment: a plan depends on its problem and seed);
        return_result: return each environment's PlanResult (with its ``reason``) instead, a list.
    Returns:
        path (num_waypoints, n_envs, n_dofs) in a scene built with n_envs (n_envs: those addressed), else
        (num_waypoints, n_dofs); with return_valid_mask ``(path, valid)``: valid (n_envs,) bools, or a bool.
    Raises:
        InputError (shapes, values outside the joint windows, options, envs_idx, ee_link_name without
        with_entity), UnknownNameError (planner, link, object).
    """
    del max_nodes  # Genesis's node budget: OMPL's search is bounded by the timeout instead
    check_waypoints(num_waypoints)
    opts = genesis_options(planner, timeout, resolution, smooth_path, max_retry, min_distance, seed,
                           ignore_collision)
    collisions = robot.planning_collisions(envs_idx, ee_link_name, with_entity)
    model, batched, count = robot.model, bool(robot.batched), len(collisions)
    if num_waypoints is None and count > 1:
        raise InputError("num_waypoints=None returns paths of their own lengths: give a number to plan "
                         f"{count} environments at once (or address one with envs_idx)")
    goals = _rows(qpos_goal, "qpos_goal", count, model.n_dofs, batched)
    now = np.asarray(robot.get_qpos(envs_idx=envs_idx), dtype=float).reshape(count, model.n_dofs)
    starts = now if qpos_start is None else _rows(qpos_start, "qpos_start", count, model.n_dofs, batched)
    model.check_window(goals, "qpos_goal")
    results = [plan(model, g, s, collision=cm, dofs_idx_local=dofs_idx_local, options=opts)
               for g, s, cm in zip(goals, starts, collisions.values())]
    failed = [e for e, r in zip(collisions, results) if not r.success]
    if failed:
        log.info("planning failed in environments %s: %s", failed, [r.reason for r in results if not r.success])
    if return_result:
        return results
    return _shaped(results, starts, num_waypoints, batched, return_valid_mask)


def _shaped(results: list[PlanResult], starts: np.ndarray, num_waypoints: int | None, batched: bool,
            return_valid_mask: bool):
    """Genesis's return: paths stacked on axis 1 (batched) or the one path, and the valid mask if asked."""
    paths = [waypoints(r, s, num_waypoints) for r, s in zip(results, starts)]
    valid = np.array([r.success for r in results])
    path = np.stack(paths, axis=1) if batched else paths[0]
    if not return_valid_mask:
        return path
    return path, (valid if batched else bool(valid[0]))
