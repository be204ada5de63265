"""OMPL (PyPI ``ompl`` 2.0.x, nanobind bindings) as the search: a real-vector space over the planned DOFs, states
checked by our sphere model and edges by :meth:`PlanningSpace.motion_valid` (one compiled call per edge), the goal
as a set of goal states (OMPL's GoalStates: the planner may reach any of them).

OMPL is imported lazily: without it :func:`search` raises PlannerUnavailableError saying how to install it.
"""

from __future__ import annotations

import logging
import time
from typing import NamedTuple

import numpy as np

from app.errors import AppError, UnknownNameError
from app.planning.space import PlanningSpace

log = logging.getLogger(__name__)

# our name -> OMPL geometric planner class name. RRTConnect: the default (Genesis's too); the others are
# asymptotically optimal: they use the whole timeout to shorten the path (path length objective).
PLANNERS = {"RRTConnect": "RRTConnect", "RRT": "RRT", "RRTstar": "RRTstar", "InformedRRTstar": "InformedRRTstar",
            "BITstar": "BITstar", "AORRTC": "AORRTC", "PRMstar": "PRMstar"}
OPTIMIZING = frozenset({"RRTstar", "InformedRRTstar", "BITstar", "AORRTC", "PRMstar"})


class PlannerUnavailableError(AppError):
    """The motion-planning library (OMPL, a core dependency) cannot be imported: a broken install."""


class SearchResult(NamedTuple):
    """path (N, n_active) or None; exact: reached a goal state; seconds: wall time of the search [s]."""

    path: np.ndarray | None
    exact: bool
    seconds: float


def _ompl():
    try:
        from ompl import base, geometric, util
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise PlannerUnavailableError(f"motion planning needs OMPL, a dependency of the app that this Python cannot "
                                      f"import: reinstall the app (pip install -e .), which installs ompl==2.0.1 "
                                      f"({exc})") from exc
    util.setLogLevel(util.LOG_WARN)
    return base, geometric, util


def check_planner(name: str) -> str:
    """``name`` if OMPL has it; else UnknownNameError listing the valid planner names."""
    if name not in PLANNERS:
        raise UnknownNameError("planner", name, PLANNERS)
    return name


def _space_information(ob, space: PlanningSpace):
    n = space.n_active
    rv = ob.RealVectorStateSpace(n)
    bounds = ob.RealVectorBounds(n)
    for i in range(n):
        bounds.setLow(i, float(space.lower[i]))
        bounds.setHigh(i, float(space.upper[i]))
    rv.setBounds(bounds)
    si = ob.SpaceInformation(rv)

    def read(state) -> np.ndarray:
        return np.fromiter((state[i] for i in range(n)), dtype=float, count=n)

    def state_valid(state) -> bool:
        return bool(space.valid(read(state)[None])[0])

    class EdgeValidator(ob.MotionValidator):
        """Edges checked by our model in one call each (OMPL's own interpolation is not used)."""

        def checkMotion(self, s1, s2, *rest):
            return space.motion_valid(read(s1), read(s2))

    si.setStateValidityChecker(state_valid)
    validator = EdgeValidator(si)
    si.setMotionValidator(validator)
    si.setup()
    return si, read, (rv, bounds, validator, state_valid)  # kept alive while the planner runs


def _state(si, q: np.ndarray):
    s = si.allocState()
    for i, v in enumerate(q):
        s[i] = float(v)
    return s


def _reseed(ou, seed: int) -> None:
    """OMPL's seed generator reset to ``seed`` before this search's planner, samplers and nearest-neighbour
    structures are made: each takes its RNG's seed from that generator in order, so a search depends on its own
    seed alone, not on what the process planned before (another block of environments, another worker). OMPL logs
    an error when the generator had handed out seeds already and applies the seed all the same (2.0.1, tested in
    tests/test_plan_runs.py): the log is silenced for the call."""
    level = ou.getLogLevel()
    ou.setLogLevel(ou.LOG_NONE)
    try:
        ou.RNG.setSeed(int(seed) % (2**31 - 2) + 1)  # 0 is refused
    finally:
        ou.setLogLevel(level)


def search(space: PlanningSpace, start: np.ndarray, goals: np.ndarray, planner: str = "RRTConnect",
           timeout: float = 5.0, seed: int | None = None, goal_threshold: float = 1e-6,
           step: float | None = None) -> SearchResult:
    """A path from ``start`` (n_active,) to any row of ``goals`` (G, n_active), both assumed valid.

    Args:
        planner: a key of PLANNERS; an optimizing one runs until ``timeout`` and returns its best path.
        timeout: [s] wall-clock budget of the search.
        seed: OMPL's random seed, set before this search (:func:`_reseed`): with RRT-Connect (which stops at its
            first path) the same problem and seed give the same path in any process; None: OMPL's stream goes on.
        step: [rad] the planner's range (longest edge it adds, Euclidean), where it has one; None: OMPL's
            default (a fifth of the space's extent).
    Returns:
        SearchResult; path None when no exact solution was found within the timeout.
    """
    ob, og, ou = _ompl()
    if seed is not None:
        _reseed(ou, seed)
    si, read, keep = _space_information(ob, space)
    pdef = ob.ProblemDefinition(si)
    pdef.addStartState(_state(si, start))
    goal = ob.GoalStates(si)
    for g in goals:
        goal.addState(_state(si, g))
    goal.setThreshold(goal_threshold)
    pdef.setGoal(goal)
    algo = getattr(og, PLANNERS[check_planner(planner)])(si)
    if planner in OPTIMIZING:
        pdef.setOptimizationObjective(ob.PathLengthOptimizationObjective(si))
    if step is not None and hasattr(algo, "setRange"):
        algo.setRange(float(step))
    algo.setProblemDefinition(pdef)
    algo.setup()
    t0 = time.perf_counter()
    algo.solve(float(timeout))
    seconds = time.perf_counter() - t0
    if not pdef.hasExactSolution():
        log.info("%s found no path in %.3f s", planner, seconds)
        return SearchResult(None, False, seconds)
    p = pdef.getSolutionPath()
    path = np.array([read(p.getState(i)) for i in range(p.getStateCount())])
    del keep
    return SearchResult(path, True, seconds)
