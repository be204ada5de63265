"""Motion planning over our own collision model (app.collision): OMPL's planners (RRT-Connect by default, an
asymptotically optimal one on request) with states and edges checked by the sphere model, goals given as joint
values or end-effector poses (turned into collision-free IK goals), shortcutting and a dense re-check, Ruckig time
parameterisation and export for Trossen's driver. Knows nothing about any simulator."""

from app.planning.goals import GoalSet, PoseGoal
from app.planning.ompl_backend import PLANNERS, PlannerUnavailableError
from app.planning.planner import REASONS, PlanOptions, PlanResult, plan
from app.planning.space import PlanningSpace
from app.planning.timing import TimedTrajectory, time_parameterize

__all__ = [
           "PLANNERS",
           "REASONS",
           "GoalSet",
           "PlanOptions",
           "PlanResult",
           "PlannerUnavailableError",
           "PlanningSpace",
           "PoseGoal",
           "TimedTrajectory",
           "plan",
           "time_parameterize",
]
