"""Pick-and-place whose free-space moves (pre-grasp, carry, retreat: ``task.planner.moves``) follow planned,
timed paths instead of straight lines.

The sequencer knows no planner: it is handed a ``mover`` (app.episode.planned_moves makes one on app.planning)
that turns a :class:`MoveRequest` into one :class:`PlannedMove` per environment, a :class:`~app.control.tracks.Track`
or the reason planning failed. The phase machine is the pick-and-place's (app.tasks.pick_place): each planned
phase starts as the straight line would, to the same goal, and then follows the track; a failed plan fails the
environment with the planner's reason (app.control.phases.PLAN_REASONS), which the report, the summary and the
video's caption show as any other failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from app.control.observation import Observation
from app.control.phases import Phase
from app.control.tracks import Track, TrackedSegments, polylines
from app.tasks.pick_place_expert import PickPlaceExpert


class MoveRequest(NamedTuple):
    """Moves to plan, one per environment of ``envs`` (k,): ``move`` (app.control.planner_config.MOVES); q
    (k, n_dofs) the measured joints [rad, m]; goal_pos (k, 3) [m], goal_rot (k, 3, 3): the end effector's goal in
    the environment's frame; obj_pos (k, 3) [m], obj_quat (k, 4) wxyz: the object now (held while carrying); q_hint
    (k, n_dofs): the joints the grasp ranking's IK found for a pose near the goal (the branch to stay on), or None."""

    move: str
    envs: np.ndarray
    q: np.ndarray
    goal_pos: np.ndarray
    goal_rot: np.ndarray
    obj_pos: np.ndarray
    obj_quat: np.ndarray
    q_hint: np.ndarray | None = None


HINTS = {"pre_grasp": 0}  # the grasp ranking's pose (app.tasks.grasps.POSES) of a goal; carry: IK from where the arm is


class PlannedMove(NamedTuple):
    """One environment's planned move: ``track`` (None where planning failed), ``reason`` ('' or one of
    app.control.phases.PLAN_REASONS) and ``stats`` for the report (planning time [s], path length [rad],
    closest clearance along the path [m], ...)."""

    track: Track | None
    reason: str
    stats: dict


Mover = Callable[[MoveRequest], list[PlannedMove]]


class PlannedPickPlaceExpert(PickPlaceExpert):
    """:class:`PickPlaceExpert` with the moves ``task.planner.moves`` planned by ``mover`` (keyword); every
    other argument as the parent's. ``plans[e]``: environment e's planned moves' stats, in order."""

    segments_cls = TrackedSegments

    def __init__(self, *args, mover: Mover, **kwargs):
        super().__init__(*args, **kwargs)
        self.mover, self.moves = mover, tuple(self.task.planner.moves)
        self.plans: list[list[dict]] = [[] for _ in range(len(self.place))]
        self.followed: list[tuple[int, str, Track]] = []  # (environment, move, track) of every planned move

    @property
    def tracks(self) -> list[Track | None]:
        """Each environment's track being followed now (None: a straight segment), for pictures."""
        return self.seg.tracks if self.seg is not None else [None] * len(self.place)

    @property
    def paths(self) -> np.ndarray:
        """The planned paths being followed now (app.control.tracks.polylines), for pictures."""
        return polylines(self.tracks)

    def _goto(self, envs: np.ndarray, t: float, obs: Observation, pose: int, phase: Phase) -> None:
        super()._goto(envs, t, obs, pose, phase)
        if pose == 0 and phase == Phase.PRE_GRASP:
            self._planned("pre_grasp", envs, t, obs)

    def _carry(self, envs, t, obs) -> None:
        super()._carry(envs, t, obs)
        self._planned("carry", envs, t, obs)

    def _retreat(self, envs, t, obs) -> None:
        super()._retreat(envs, t, obs)
        self._planned("retreat", envs, t, obs)

    def _planned(self, move: str, envs: np.ndarray, t: float, obs: Observation) -> None:
        """Replace the straight segments just started for ``envs`` by planned tracks to the same goals, or fail
        the environments whose plan failed (their arms hold)."""
        envs = np.asarray(envs, dtype=int)
        if move not in self.moves or not len(envs):
            return
        hint = self.plan.q[envs, HINTS[move]] if move in HINTS else None
        request = MoveRequest(move, envs, obs.q[envs], self.seg.p1[envs].copy(), self.seg.R1[envs].copy(),
                              obs.obj_pos[envs], obs.obj_quat[envs], hint)
        failed = np.zeros(len(self.place), dtype=bool)
        reasons = {}
        for e, planned in zip(envs, self.mover(request)):
            self.plans[e].append({"move": move, "t_s": round(float(t), 4), **planned.stats})
            if planned.track is None:
                failed[e], reasons[e] = True, planned.reason
            else:
                self.seg.follow(int(e), t, planned.track)
                self.followed.append((int(e), move, planned.track))
        for reason in sorted(set(reasons.values())):
            self._fail(failed & np.array([reasons.get(e) == reason for e in range(len(failed))]), reason, t)

    def restart(self, envs) -> None:
        super().restart(envs)
        for e in np.asarray(envs, dtype=int).reshape(-1):
            self.plans[e] = []

    def finish(self, obs: Observation) -> list[dict]:
        """The pick-and-place's results, each with ``plans``: its planned moves' stats."""
        return [{**result, "plans": self.plans[e]} for e, result in enumerate(super().finish(obs))]
