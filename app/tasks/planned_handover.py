"""A hand-over whose free-space moves follow planned paths (``task.planner.moves``): ``pre_grasp`` moves both arms
together (one plan over both arms' joints, to the giver's pre-grasp and the taker's waiting pose), ``to_meet`` the
giver carrying the object to the meeting point and ``carry`` the taker carrying it to the place, each past the
other arm (its joints held, the arm pairs checked).

As app.tasks.planned_pick, the sequencer knows no planner: a ``mover`` (app.episode.planned_arms) turns an
:class:`ArmsMoveRequest` into one :class:`ArmsMove` per environment, a track per moving arm or the reason planning
failed, which fails the environment (the report, the summary and the caption show it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from app.control.observation import Observation
from app.control.tracks import Track, TrackedSegments, polylines
from app.tasks.handover_expert import GIVER, TAKER, HandoverExpert, Step


class ArmsMoveRequest(NamedTuple):
    """Moves to plan for the environments ``envs`` (k,): ``move``; q (k, n_dofs) the measured joints; ``arms``
    the moving arms' indices (GIVER, TAKER) with goal_pos (len(arms), k, 3) [m] and goal_rot (len(arms), k, 3, 3)
    for their end effectors (environment frame); ``holder``: the arm carrying the object (-1: none) at obj_pos
    (k, 3) [m], obj_quat (k, 4) wxyz."""

    move: str
    envs: np.ndarray
    q: np.ndarray
    arms: tuple[int, ...]
    goal_pos: np.ndarray
    goal_rot: np.ndarray
    holder: int
    obj_pos: np.ndarray
    obj_quat: np.ndarray


class ArmsMove(NamedTuple):
    """One environment's planned move: a track per moving arm (None where planning failed), the reason ('' or
    app.control.phases.PLAN_REASONS) and the stats for the report."""

    tracks: list[Track] | None
    reason: str
    stats: dict


ArmsMover = Callable[[ArmsMoveRequest], list[ArmsMove]]


class PlannedHandoverExpert(HandoverExpert):
    """:class:`HandoverExpert` with ``task.planner.moves`` planned by ``mover`` (keyword); ``plans[e]``: its
    planned moves' stats."""

    segments_cls = TrackedSegments

    def __init__(self, *args, mover: ArmsMover, **kwargs):
        super().__init__(*args, **kwargs)
        self.mover, self.moves = mover, tuple(self.task.planner.moves)
        self.plans: list[list[dict]] = [[] for _ in range(len(self.place))]

    @property
    def paths(self) -> np.ndarray:
        """Both arms' planned paths being followed (n_envs, 2 P + 1, 3), a NaN row between them, for pictures."""
        n = len(self.place)
        if self.segs is None:
            return np.full((n, 1, 3), np.nan, dtype=np.float32)
        parts = [polylines(self.segs[GIVER].tracks), np.full((n, 1, 3), np.nan, np.float32),
                 polylines(self.segs[TAKER].tracks)]
        return np.concatenate(parts, axis=1)

    def _begin(self, t: float, g: Observation, k: Observation) -> None:
        super()._begin(t, g, k)
        self._planned("pre_grasp", np.flatnonzero(self.step == Step.PRE_GRASP), (GIVER, TAKER), -1, t, g)

    def _to_meet(self, envs, t, g, k) -> None:
        super()._to_meet(envs, t, g, k)
        self._planned("to_meet", envs, (GIVER,), GIVER, t, g)

    def _carry(self, envs, t, g, k) -> None:
        super()._carry(envs, t, g, k)
        self._planned("carry", envs, (TAKER,), TAKER, t, k)

    def _planned(self, move: str, envs: np.ndarray, arms: tuple[int, ...], holder: int, t: float,
                 obs: Observation) -> None:
        """Replace the straight segments just started for ``envs`` by planned tracks of the arms ``arms`` to the
        same goals, or fail the environments whose plan failed (both arms hold)."""
        envs = np.asarray(envs, dtype=int)
        if move not in self.moves or not len(envs):
            return
        request = ArmsMoveRequest(move, envs, obs.q[envs], arms, np.stack([self.segs[a].p1[envs] for a in arms]),
                                  np.stack([self.segs[a].R1[envs] for a in arms]), holder, obs.obj_pos[envs],
                                  obs.obj_quat[envs])
        reasons: dict[int, str] = {}
        for e, planned in zip(envs, self.mover(request)):
            self.plans[e].append({"move": move, "t_s": round(float(t), 4), **planned.stats})
            if planned.tracks is None:
                reasons[int(e)] = planned.reason
                continue
            for a, track in zip(arms, planned.tracks):
                self.segs[a].follow(int(e), t, track)
        for reason in sorted(set(reasons.values())):
            mask = np.zeros(len(self.place), dtype=bool)
            mask[[e for e, r in reasons.items() if r == reason]] = True
            self._fail(mask, reason, t, arms[0])

    def finish(self, obs: dict[str, Observation]) -> list[dict]:
        """The hand-over's results, each with ``plans``: its planned moves' stats."""
        return [{**result, "plans": self.plans[e]} for e, result in enumerate(super().finish(obs))]
