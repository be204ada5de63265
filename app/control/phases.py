"""The phases of a pick-and-place and the per-environment record of how each episode went."""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Phase(IntEnum):
    PRE_GRASP = 0
    DESCEND = 1
    CLOSE = 2
    LIFT = 3
    CARRY = 4
    PLACE = 5
    OPEN = 6
    RETREAT = 7
    DONE = 8
    FAILED = 9


class HandoverPhase(IntEnum):
    """A hand-over's steps (app.tasks.handover): the giver picks, both meet, the taker takes and places."""

    PRE_GRASP = 0
    DESCEND = 1
    CLOSE = 2
    LIFT = 3
    TO_MEET = 4
    TAKE = 5
    TAKE_CLOSE = 6
    GIVE_OPEN = 7
    GIVE_RETREAT = 8
    CARRY = 9
    PLACE = 10
    OPEN = 11
    RETREAT = 12
    DONE = 13
    FAILED = 14


class PushPhase(IntEnum):
    """A push's steps (app.tasks.push): above the point behind the object, down, push, back off and up."""

    APPROACH = 0
    LOWER = 1
    PUSH = 2
    BACK_OFF = 3
    RETREAT = 4
    DONE = 5
    FAILED = 6


class LiftPhase(IntEnum):
    """A two-arm lift's steps (app.tasks.bimanual_lift): both arms above the ends, down, close, lift, hold."""

    PRE_GRASP = 0
    DESCEND = 1
    CLOSE = 2
    LIFT = 3
    HOLD = 4
    FAILED = 5


class InsertPhase(IntEnum):
    """A two-arm insertion's steps (app.tasks.bimanual_insertion): each arm picks its part, both meet, the peg goes
    in."""

    PRE_GRASP = 0
    DESCEND = 1
    CLOSE = 2
    LIFT = 3
    MEET = 4
    ALIGN = 5
    INSERT = 6
    HOLD = 7
    FAILED = 8


PHASES = tuple(p.name.lower() for p in Phase)
HANDOVER_PHASES = tuple(p.name.lower() for p in HandoverPhase)
# a planned move's failures (app.planning's reasons; its ``timeout`` is ``plan_timeout``, a phase's is ``timeout``)
PLAN_REASONS = ("start_in_collision", "goal_in_collision", "no_ik_goal", "plan_timeout", "path_in_collision")
REASONS = ("unreachable", "ungraspable", "grasp_missed", "slipped", "dropped", "collision", "timeout",
           "misplaced") + PLAN_REASONS
PLAN_WORDS = ("moving", "arrived")  # a plan task's environment on its track, and after it (app.control.plan_motion)
PUSH_PHASES = tuple(p.name.lower() for p in PushPhase)
WORDS = PHASES + REASONS + tuple(w for w in HANDOVER_PHASES if w not in PHASES) + PLAN_WORDS  # an episode code's word
LIFT_PHASES = tuple(p.name.lower() for p in LiftPhase)
WORDS += tuple(w for w in PUSH_PHASES if w not in WORDS)  # appended: the earlier words keep their codes
WORDS += tuple(w for w in LIFT_PHASES if w not in WORDS)
INSERT_PHASES = tuple(p.name.lower() for p in InsertPhase)
WORDS += tuple(w for w in INSERT_PHASES if w not in WORDS)


def phase_codes(names: tuple[str, ...], phase: np.ndarray, failed: int, reasons: list[str]) -> np.ndarray:
    """Per environment (n_envs,) int16 the caption's word (its index in WORDS): ``reasons[e]`` where ``phase[e]``
    is ``failed``, else ``names[phase[e]]`` (an expert's phase words)."""
    return np.array([WORDS.index(reasons[e] if p == failed else names[p]) for e, p in enumerate(phase)],
                    dtype=np.int16)


def code_label(code: int) -> str:
    """The overlay's word for an episode code (PickLog.codes, HandoverExpert.codes)."""
    return WORDS[code]


class PickLog:
    """Per environment (n_envs): the phase, when each phase began [s], the last phase before a failure, the
    failure's reason and time, the largest slip of the held object [m], the object's start pose."""

    def __init__(self, n_envs: int):
        self.phase = np.full(n_envs, Phase.PRE_GRASP, dtype=np.int8)
        self.reached = np.full(n_envs, Phase.PRE_GRASP, dtype=np.int8)  # the furthest phase entered
        self.started: list[dict[str, float]] = [{} for _ in range(n_envs)]
        self.reason = [""] * n_envs
        self.failed_at = np.full(n_envs, np.nan)
        self.slip_max = np.zeros(n_envs)
        self.obj_start: tuple[np.ndarray, np.ndarray] | None = None

    def codes(self) -> np.ndarray:
        """Per environment (n_envs,) int8: the phase (Phase), or len(PHASES) + the failure's index in REASONS."""
        failed = np.array([REASONS.index(r) if r else 0 for r in self.reason], dtype=np.int8)
        return np.where(self.phase == Phase.FAILED, len(PHASES) + failed, self.phase).astype(np.int8)

    def start(self, obj_pos: np.ndarray, obj_quat: np.ndarray) -> None:
        self.obj_start = (obj_pos.copy(), obj_quat.copy())

    def reset(self, envs: np.ndarray) -> None:
        """Environments ``envs`` start over (a new pick): no phase entered, no failure."""
        for e in envs:
            self.phase[e] = self.reached[e] = Phase.PRE_GRASP
            self.started[e], self.reason[e], self.failed_at[e], self.slip_max[e] = {}, "", np.nan, 0.0

    def enter(self, envs: np.ndarray, phase: Phase, t: float) -> None:
        self.phase[envs] = phase
        self.reached[envs] = np.maximum(self.reached[envs], phase)
        for e in envs:
            self.started[e][PHASES[phase]] = round(float(t), 4)

    def fail(self, env: int, reason: str, t: float) -> None:
        self.phase[env] = Phase.FAILED
        self.reason[env], self.failed_at[env] = reason, t

    def results(self, obs, place: np.ndarray, placed: np.ndarray, plan) -> list[dict]:
        """One dict per environment for the report (see PickPlaceExpert.finish); ``placed`` (n_envs,) bool:
        the object lies at its place, released (ObjectTask.placement)."""
        out = []
        for e in range(len(self.phase)):
            done = self.phase[e] == Phase.DONE
            success = bool(done and placed[e])
            reason = self.reason[e] or ("" if success else "misplaced" if done else "timeout")
            grasp = None if plan is None else {
                "ok": bool(plan.ok[e]), "yaw_offset_rad": float(plan.yaw_offset[e]), "depth_m": float(plan.depth[e]),
                "tilt_rad": float(plan.tilt[e]), "width_m": float(plan.width[e]),
                "score": float(plan.score[e]) if plan.ok[e] else None,
                "candidates": int(plan.n_candidates), "reachable_candidates": int(plan.n_reachable[e])}
            out.append({"success": success, "reason": reason, "phase": PHASES[self.phase[e]],
                        "phase_reached": PHASES[self.reached[e]], "phase_started_s": self.started[e],
                        "failed_at_s": None if np.isnan(self.failed_at[e]) else float(self.failed_at[e]),
                        "place_target": place[e], "place_error_xy_m": float(np.linalg.norm(obs.obj_pos[e, :2] - place[e, :2])),
                        "object_start_pos": self.obj_start[0][e] if self.obj_start else None,
                        "object_start_quat_wxyz": self.obj_start[1][e] if self.obj_start else None,
                        "object_final_pos": obs.obj_pos[e], "object_final_quat_wxyz": obs.obj_quat[e],
                        "slip_max_m": float(self.slip_max[e]), "grasp": grasp})
        return out
