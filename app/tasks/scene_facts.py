"""What a task's scripted expert is told of the scene it works in: one record built by the runner
(app.episode.motion_factory) from the built scene, so that a task module never sees the simulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class GripperFacts(NamedTuple):
    """One arm's gripper: its end-effector link, the end effector's approach and closing axes ('x', '-z', ...)
    and the open fingers' gap [m]."""

    ee_link: str
    approach_axis: str
    closing_axis: str
    max_opening: float


class SceneFacts(NamedTuple):
    """The scene of k environments as an expert needs it (environment frames, SI units).

    model: the robot's RobotModel; base: its BaseFrame (environment <-> base); arm_dofs: the DOFs the arm controller
    moves. grippers: arm name -> GripperFacts of each named arm, and '' -> the robot's one gripper (on the run's end
    effector) where it has one. half_extents (3,) [m] and round (a cylinder or sphere) of the task's object; obj_pos (k,
    3) [m]: its start positions; starts: every object's start, name -> (pos (k, 3) [m], quat (k, 4) wxyz); halves: name
    -> half extents (3,) [m]; places (k, 2) [m]: the place targets; envs (k,): the environments' indices in the whole
    run (they seed planned moves); seed: the run's. sphere_model(): the table, the obstacles and the robot as a
    CollisionModel (built on demand). reach(links) -> ``reach(arm, pos (m, 3), rot (m, 3, 3)) -> (m,)``: per pose, the
    smallest joint margin of arm ``arm`` (an index into links) in the IK's answer, -inf where unreached. mover(planner,
    arms, links): the planner's mover for one arm (arms None) or for the arms named (app.episode.planned_moves,
    planned_arms).
    """

    model: object
    base: object
    arm_dofs: np.ndarray
    grippers: dict[str, GripperFacts]
    half_extents: np.ndarray
    round: bool
    obj_pos: np.ndarray
    starts: dict[str, tuple[np.ndarray, np.ndarray]]
    halves: dict[str, np.ndarray]
    places: np.ndarray
    envs: np.ndarray
    seed: int
    sphere_model: Callable[[], object]
    reach: Callable[[list[str]], Callable]
    mover: Callable[..., object]
