"""Bimanual lift: two arms lift a long box level off the table (the Stationary AI). The expert, per environment
and both arms in step: above the box's two ends (each arm the end nearer its hand, ``grip_inset`` [m] in from it),
down to its centre height, close, and when both hold it for ``close_time`` lift it ``lift_height`` straight up,
both segments of one duration, then hold it there. Goals come from the box's measured pose when a step starts; a
step that does not end within its segment's time plus ``phase_timeout`` fails with ``timeout``; ``grasp_missed``
(a gripper closed on nothing), ``dropped`` (a gripper lost it after the grasp), ``collision``.

Success: every gripper holds the box, its centre ``min_lift`` [m] above its start and its long axis within
``max_tilt`` [rad] of level, no collision at any step. Stages (the reward): 0 nothing, 1 touched, 2 held by one
gripper, 3 held by both, 4 lifted level. Failure reasons: ``collision``, ``not_touched``, ``grasp_missed``,
``one_arm`` (never held by both), ``tilted`` (held by both, up, not level), ``dropped`` (held by both once, not
now), ``not_lifted``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.control.motion_protocol import MotionBase, Targets
from app.control.motions import arm_link
from app.control.phases import LiftPhase, phase_codes
from app.control.segments import Segments, segment_targets
from app.kinematics.rotations import axis_vector, quat_to_matrix
from app.tasks.grasps import grasp_rotation
from app.tasks.holding import reached
from app.tasks.object_task import ObjectTask
from app.tasks.outcome import Evaluation, TaskState
from app.tasks.registry import register_task
from app.tasks.scene_facts import SceneFacts
from app.validation import Check, CheckContext, Where

LIFT_REASONS = ("collision", "not_touched", "grasp_missed", "one_arm", "tilted", "dropped", "not_lifted")


@register_task
@dataclass(frozen=True)
class BimanualLiftTask(ObjectTask):
    """Lift ``object`` (a box, longest along its own x) with the arms ``arms`` gripping its two ends."""

    type: ClassVar[str] = "bimanual_lift"
    robots: ClassVar[str] = "two arms with grippers (the Stationary AI)"
    config: ClassVar[str] = "configs/tasks/bimanual_lift.yaml"
    env_id: ClassVar[str] = "app/StationaryAIBimanualLift-v0"
    n_arms: ClassVar[int] = 2
    reasons: ClassVar[tuple[str, ...]] = LIFT_REASONS
    object: str = "bar"
    arms: tuple[str, str] = ("left", "right")
    grip_inset: float = 0.04
    lift_height: float = 0.1
    min_lift: float = 0.05
    max_tilt: float = 0.1745  # [rad] 10 degrees
    min_separation: float = 0.0

    def places(self, starts: dict, seed: int) -> np.ndarray:
        """Where the box starts (k, 2) [m]: it is lifted, not moved."""
        return starts[self.object][0][:, :2].copy()

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        return [(("task", "arms"), arm_link(arm, robot, "task.arms")) for arm in self.arms]

    def evaluate(self, state: TaskState) -> Evaluation:
        """Success, stage and reason at this step (see the module docstring)."""
        s = state
        axis = quat_to_matrix(s.obj_quat)[:, :, 0]
        tilt = np.arcsin(np.clip(np.abs(axis[:, 2]), 0.0, 1.0))
        up = s.obj_pos[:, 2] - s.start_z
        collided = s.ever_collided | s.collided
        success = s.held_all & (up >= self.min_lift) & (tilt <= self.max_tilt) & ~collided
        stage = np.select([success, s.held_all, s.held, s.touched], [4, 3, 2, 1], 0)
        best = np.maximum(s.best, stage)
        reason = ["" if success[e] else "collision" if collided[e] else
                  ("not_touched", "grasp_missed", "one_arm")[best[e]] if best[e] < 3 else
                  "dropped" if not s.held_all[e] else "tilted" if up[e] >= self.min_lift else "not_lifted"
                  for e in range(len(success))]
        return Evaluation(success, stage, np.abs(tilt), s.collided, reason)

    def expert(self, facts: SceneFacts) -> BimanualLiftExpert:
        grippers = [facts.grippers[a] for a in self.arms]
        return BimanualLiftExpert(self, [facts.half_extents] * 2, [facts.obj_pos] * 2,
                                  [(g.approach_axis, g.closing_axis) for g in grippers])

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        s = ctx.scene
        obj = next((o for o in s.objects if o.name == self.object), None)
        return super().checks(at, ctx) + two_arm_checks(self, at, ctx) + [
            (at("object"), obj is not None and obj.shape == "box",
             f"{self.object!r} must be a box of the scene; objects: {sorted(o.name for o in s.objects)}"),
            (at("grip_inset"), obj is None or obj.shape != "box" or 0 < self.grip_inset < obj.size[0] / 4,
             f"must be in (0, a quarter of {self.object!r}'s length) m, got {self.grip_inset}"),
            (at("max_tilt"), 0 < self.max_tilt < np.pi / 2, f"must be in (0, pi/2) rad, got {self.max_tilt}"),
        ]


def two_arm_checks(task, at: Where, ctx: CheckContext) -> list[Check]:
    """A two-arm task's ``arms`` (two different arms of the scene's robot) and ``min_lift`` (below lift_height)."""
    arms = sorted(ctx.scene.robot.arms or {})
    return [(at("arms"), len(task.arms) == 2 and task.arms[0] != task.arms[1] and set(task.arms) <= set(arms),
             f"two different arms of the scene's robot {arms}, got {list(task.arms)}"),
            (at("min_lift"), 0 < task.min_lift < task.lift_height,
             f"must be in (0, lift_height={task.lift_height}) m, got {task.min_lift}")]


class BimanualLiftExpert(MotionBase):
    """Both arms' steps in every environment (see the module docstring). halves: per arm the half extents (3,)
    [m] of what it grips (the bar's, twice); starts: per arm that object's start positions (n_envs, 3); axes: per
    arm (approach_axis, closing_axis) of its end effector. A subclass changes ``phases`` (an IntEnum with
    PRE_GRASP, DESCEND, CLOSE, LIFT, ..., HOLD, FAILED), ``after`` (what follows each arrival), ``_grips`` and
    ``_step``."""

    n_targets = 2
    feedback = True
    phases: ClassVar[type] = LiftPhase
    after: ClassVar[dict] = {LiftPhase.PRE_GRASP: LiftPhase.DESCEND, LiftPhase.DESCEND: LiftPhase.CLOSE,
             LiftPhase.LIFT: LiftPhase.HOLD}  # an arrival in the key's step starts the value's (CLOSE: when held)

    def __init__(self, task: BimanualLiftTask, halves: list[np.ndarray], starts: list[np.ndarray],
                 axes: list[tuple[str, str]]):
        n = len(starts[0])
        self.task, self.halves, self.axes = task, [np.asarray(h, dtype=float) for h in halves], axes
        self.arms, self.object_name = tuple(task.arms), task.object
        self.arm_objects = task.arm_objects()
        self.place = np.asarray(starts[0], dtype=float).copy()  # lifted where it lies
        self.closing = np.zeros((2, n))
        self.phase = np.full(n, self.phases.PRE_GRASP, dtype=np.int8)
        self.reason, self.failed_at = [""] * n, np.full(n, np.nan)
        self._held_time, self._lost_time = np.zeros(n), np.zeros(n)
        self._last_t = 0.0
        self.segs: list[Segments] | None = None

    def __call__(self, t: float) -> Targets:
        return segment_targets(self.segs, self.place, t, k=2)

    @property
    def marks(self) -> np.ndarray:
        return self.place[:, None].copy()

    @property
    def released(self) -> np.ndarray:
        return (self.phase >= self.phases.DESCEND) & (self.phase <= self.phases.HOLD)

    @property
    def holder(self) -> np.ndarray:
        return np.full(len(self.place), -1)

    @property
    def exchanging(self) -> np.ndarray:
        return np.zeros(len(self.place), bool)

    def codes(self) -> np.ndarray:
        return phase_codes(tuple(p.name.lower() for p in self.phases), self.phase, self.phases.FAILED, self.reason)

    def observe(self, t: float, obs: dict) -> None:
        """Advance every environment with both arms' observations (arm name -> Observation) at t [s]."""
        dt, self._last_t = t - self._last_t, t
        seen, P, task = [obs[a] for a in self.arms], self.phases, self.task
        if self.segs is None:
            self.segs = [Segments(o.ee_pos, o.ee_rot, task.speed, task.accel, task.angular_speed) for o in seen]
            self._step(np.arange(len(self.place)), t, seen, P.PRE_GRASP)
            return
        ph = self.phase.copy()
        running = ph < P.HOLD
        self._fail(running & (seen[0].collided | seen[1].collided), "collision", t)
        late = running & (t > np.maximum(*[s.t0 + s.T for s in self.segs]) + task.phase_timeout)
        self._fail(late & (ph == P.CLOSE), "grasp_missed", t)
        self._fail(late, "timeout", t)
        both = seen[0].contact.all(axis=1) & seen[1].contact.all(axis=1)
        self._fail((ph == P.CLOSE) & ~both & np.any([o.closing > 0.97 for o in seen], axis=0), "grasp_missed", t)
        self._lost_time = np.where((ph >= P.LIFT) & (ph <= P.HOLD) & ~both, self._lost_time + dt, 0.0)
        self._fail(self._lost_time > 0.1, "dropped", t)
        arrived = self.phase == ph
        for s, o in zip(self.segs, seen):
            arrived &= s.done(t) & reached(o, s, task.pos_tol, task.rot_tol)
        self._held_time = np.where((ph == P.CLOSE) & both, self._held_time + dt, 0.0)
        for phase, nxt in self.after.items():
            self._step(np.flatnonzero(arrived & (ph == phase)), t, seen, nxt)
        self._step(np.flatnonzero((self.phase == P.CLOSE) & (self._held_time >= task.close_time)), t, seen, P.LIFT)

    def _step(self, envs: np.ndarray, t: float, seen: list, phase) -> None:
        """Environments ``envs`` start step ``phase``."""
        if not len(envs):
            return
        P = self.phases
        if phase in (P.PRE_GRASP, P.DESCEND):
            for k, (pos, rot) in enumerate(self._grips(envs, seen)):
                up = self.task.approach_height if phase == P.PRE_GRASP else 0.0
                self.segs[k].move_to(envs, t, pos + [0.0, 0.0, up], rot)
        elif phase == P.CLOSE:
            self.closing[:, envs] = 1.0
            self._held_time[envs] = 0.0
        elif phase == P.LIFT:
            for s in self.segs:
                s.move_to(envs, t, s.p1[envs] + [0.0, 0.0, self.task.lift_height], s.R1[envs])
        self.phase[envs] = phase

    def _grips(self, envs: np.ndarray, seen: list) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per arm its grip (pos (k, 3), rot (k, 3, 3)) of the bar as it lies now: over the end nearer its hand,
        pointing down, closing across the bar."""
        R_obj = quat_to_matrix(seen[0].obj_quat[envs])
        along = _level(R_obj[:, :, 0])
        reach, centre = self.halves[0][0] - self.task.grip_inset, seen[0].obj_pos[envs]
        out = []
        for k, o in enumerate(seen):
            sign = np.sign(np.einsum("ki,ki->k", o.ee_pos[envs] - centre, along))  # the end nearer this hand
            grip = centre + along * (np.where(sign == 0, 1.0 - 2 * k, sign) * reach)[:, None]
            out.append((grip, self._down(k, envs, o, _level(R_obj[:, :, 1]))))
        return out

    def _down(self, k: int, envs: np.ndarray, o, across: np.ndarray) -> np.ndarray:
        """Arm k's gripper pointing down, closing along ``across`` (k, 3) or its opposite, the nearer its own."""
        closing_now = o.ee_rot[envs] @ axis_vector(self.axes[k][1])
        c = across * np.where(np.einsum("ki,ki->k", across, closing_now) < 0, -1.0, 1.0)[:, None]
        return grasp_rotation(np.broadcast_to([0.0, 0.0, -1.0], c.shape), c, *self.axes[k])

    def _fail(self, mask: np.ndarray, reason: str, t: float) -> None:
        envs = np.flatnonzero(mask & (self.phase < self.phases.HOLD))
        for e in envs:
            self.reason[e], self.failed_at[e] = reason, t
        self.phase[envs] = self.phases.FAILED
        for s in self.segs or ():
            if len(envs):
                s.hold(envs, t)

    def finish(self, obs: dict) -> list[dict]:
        """Per environment: the step reached, the expert's reason of a failure, the first arm's object's start and
        end."""
        o = obs[self.arms[0]]
        up = o.obj_pos[:, 2] - self.place[:, 2]
        return [{"success": bool(self.phase[e] == self.phases.HOLD), "reason": self.reason[e],
                 "phase": self.phases(self.phase[e]).name.lower(),
                 "failed_at_s": None if np.isnan(self.failed_at[e]) else float(self.failed_at[e]),
                 "lift_m": float(up[e]), "object_start_pos": self.place[e].tolist(),
                 "object_final_pos": o.obj_pos[e].tolist(), "slip_max_m": 0.0} for e in range(len(self.place))]


def _level(v: np.ndarray) -> np.ndarray:
    """Vectors (k, 3) made horizontal and of unit length."""
    v = v.copy()
    v[:, 2] = 0.0
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
