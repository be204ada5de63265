"""Push: slide a cube over the table to a target without grasping it (one arm with a gripper, its fingers
closed). The expert, per environment: above a point behind the cube on the line from the cube to the target
(approach), down to the cube's centre height (lower), along that line until the cube's centre should be on the
target (push), back off and up; then, if the cube is not within ``aim_tol`` of the target, again from where it
lies now, at most ``max_pushes`` times; finally up (retreat). Each goal comes from the cube's measured pose when
the step starts; a step that does not end within its segment's time plus ``phase_timeout`` fails with
``timeout``; ``collision`` as Observation.collided says. Poses are in the environment's frame.

Success: the cube rests within ``success_tol`` of the target in x and y, on the table, never lifted in the
fingers, no collision. Stages (the reward): 0 nothing, 1 touched, 2 moved ``MOVED`` from its start, 3 on the target.
Failure reasons: ``collision``, ``grasped`` (the fingers lifted it at some step), ``pushed_off_table`` (it ended
below where it started), ``not_touched``, ``not_moved``, ``missed_target`` (moved, resting off the target),
``timeout`` (still sliding)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.control.motion_protocol import MotionBase, Targets
from app.control.observation import Observation
from app.control.phases import PUSH_PHASES, PushPhase, phase_codes
from app.control.segments import Segments, segment_targets
from app.kinematics.rotations import quat_to_matrix
from app.tasks.grasps import grasp_rotation
from app.tasks.holding import reached
from app.tasks.object_task import ObjectTask
from app.tasks.outcome import FALL, LIFT, RESTING_SPEED, Evaluation, TaskState
from app.tasks.registry import register_task
from app.tasks.scene_facts import SceneFacts
from app.validation import Check, CheckContext, Where

P = PushPhase
MOVED = 0.01  # [m] from the start: the cube was moved
PUSH_REASONS = ("collision", "grasped", "pushed_off_table", "not_touched", "not_moved", "missed_target", "timeout")


@register_task
@dataclass(frozen=True)
class PushTask(ObjectTask):
    """Push ``object`` (a box) to ``place_pos`` or a point drawn from ``place_range`` at least ``min_separation``
    [m] from its start, within ``success_tol`` [m]. The expert's fingers ``standoff`` [m] from the cube's face
    before a push, ``finger_depth`` [m]: from the end-effector point to the closed fingers' front face along the
    push; it pushes at ``push_speed`` [m/s] and again while the cube is more than ``aim_tol`` [m] off target."""

    type: ClassVar[str] = "push"
    config: ClassVar[str] = "configs/tasks/push.yaml"
    env_id: ClassVar[str] = "app/WidowXAIPush-v0"
    reasons: ClassVar[tuple[str, ...]] = PUSH_REASONS
    misplaced: ClassVar[str] = "missed_target"
    success_tol: float = 0.02
    standoff: float = 0.03
    finger_depth: float = 0.012
    push_speed: float = 0.1
    aim_tol: float = 0.01
    max_pushes: int = 4

    def evaluate(self, state: TaskState) -> Evaluation:
        """Success, stage and reason at this step (see the module docstring)."""
        s = state
        error = np.linalg.norm(s.obj_pos[:, :2] - s.place[:, :2], axis=1)
        on_table = s.obj_pos[:, 2] >= s.start_z - FALL
        lifted = s.held & (s.obj_pos[:, 2] > s.start_z + LIFT)
        collided, grasped = s.ever_collided | s.collided, s.ever_lifted | lifted
        success = (error <= self.success_tol) & on_table & (s.obj_speed < RESTING_SPEED) & ~collided & ~grasped
        stage = np.select([success, s.moved >= MOVED, s.touched], [3, 2, 1], 0)
        best = np.maximum(s.best, stage)
        reason = [_reason(e, success, collided, grasped, on_table, best, s) for e in range(len(success))]
        return Evaluation(success, stage, error, s.collided, reason)

    def expert(self, facts: SceneFacts) -> PushExpert:
        gripper = facts.grippers[""]
        return PushExpert(self, facts.half_extents, facts.places, self.rest_heights(facts), facts.obj_pos,
                          (gripper.approach_axis, gripper.closing_axis))

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        obj = next((o for o in ctx.scene.objects if o.name == self.object), None)
        objects = sorted(o.name for o in ctx.scene.objects)
        return super().checks(at, ctx) + [
            (at("object"), obj is not None, f"{self.object!r} is not an object of the scene; objects: {objects}"),
            (at("object"), obj is None or obj.shape == "box",
             f"{self.object!r} must be a box (it is pushed on a face)"),
            (at("type"), ctx.scene.robot.gripper is not None, "push needs a gripper (closed, it is the pusher)"),
            (at("max_pushes"), 1 <= self.max_pushes <= 20, f"must be 1..20, got {self.max_pushes}"),
        ] + [(at(k), getattr(self, k) > 0, f"must be > 0, got {getattr(self, k)}")
             for k in ("standoff", "finger_depth", "push_speed", "aim_tol")]


def _reason(e: int, success, collided, grasped, on_table, best, s: TaskState) -> str:
    if success[e]:
        return ""
    if collided[e]:
        return "collision"
    if grasped[e]:
        return "grasped"
    if not on_table[e]:
        return "pushed_off_table"
    if best[e] < 2:
        return ("not_touched", "not_moved")[best[e]]
    return "missed_target" if s.obj_speed[e] < RESTING_SPEED else "timeout"


class PushExpert(MotionBase):
    """The push of every environment (see the module docstring). half: the cube's half extents (3,) [m];
    place_xy (n_envs, 2), rest_z (n_envs,) [m]: the targets and the cube's resting centre height; obj_pos
    (n_envs, 3): its starts; axes: the end effector's (approach_axis, closing_axis)."""

    n_targets = 1
    feedback = True

    def __init__(self, task: PushTask, half: np.ndarray, place_xy: np.ndarray, rest_z: np.ndarray,
                 obj_pos: np.ndarray, axes: tuple[str, str]):
        n = len(place_xy)
        self.task, self.half, self.axes, self.object_name = task, np.asarray(half, dtype=float), axes, task.object
        self.place = np.column_stack([place_xy, np.asarray(rest_z, dtype=float).reshape(n)])
        self.start = np.asarray(obj_pos, dtype=float).copy()
        self.closing = np.ones(n)  # closed throughout: the fingers are the pusher
        self.phase = np.full(n, P.APPROACH, dtype=np.int8)
        self.pushes, self.reason, self.failed_at = np.zeros(n, int), [""] * n, np.full(n, np.nan)
        self.seg: Segments | None = None

    def __call__(self, t: float) -> Targets:
        return segment_targets(None if self.seg is None else [self.seg], self.place, t)

    @property
    def marks(self) -> np.ndarray:
        return self.place[:, None].copy()

    @property
    def released(self) -> np.ndarray:
        """The fingers may touch the cube while pushing."""
        return (self.phase >= P.LOWER) & (self.phase <= P.BACK_OFF)

    @property
    def holder(self) -> np.ndarray:
        return np.full(len(self.place), -1)

    def codes(self) -> np.ndarray:
        return phase_codes(PUSH_PHASES, self.phase, P.FAILED, self.reason)

    def observe(self, t: float, obs: Observation) -> None:
        """Advance every environment's steps with what was measured at t [s]."""
        if self.seg is None:
            task = self.task
            self.seg = Segments(obs.ee_pos, obs.ee_rot, task.speed, task.accel, task.angular_speed)
            self._approach(np.arange(len(self.place)), t, obs)
            return
        ph = self.phase.copy()
        active = ph < P.DONE
        self._fail(active & obs.collided, "collision", t)
        self._fail(active & (t > self.seg.t0 + self.seg.T + self.task.phase_timeout), "timeout", t)
        arrived = self.seg.done(t) & reached(obs, self.seg, self.task.pos_tol, self.task.rot_tol) & (self.phase == ph)
        steps = ((P.APPROACH, self._lower), (P.LOWER, self._push), (P.PUSH, self._back_off),
                 (P.BACK_OFF, self._again), (P.RETREAT, self._done))
        for phase, nxt in steps:
            envs = np.flatnonzero(arrived & (ph == phase))
            if len(envs):
                nxt(envs, t, obs)

    def _line(self, envs: np.ndarray, obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per environment the push direction d (k, 3) (cube to target, horizontal), the gripper's rotation
        (k, 3, 3) (pointing down, closing across d) and how far behind its centre the cube's face is (k,) [m]."""
        d = self.place[envs] - obs.obj_pos[envs]
        d[:, 2] = 0.0
        d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
        across = np.stack([-d[:, 1], d[:, 0], np.zeros(len(envs))], axis=1)
        down = np.broadcast_to([0.0, 0.0, -1.0], d.shape)
        R = grasp_rotation(down, across, *self.axes)
        R_obj = quat_to_matrix(obs.obj_quat[envs])
        face = np.abs(np.einsum("kij,ki->kj", R_obj, d)) @ self.half  # the footprint's half width along d
        return d, R, face

    def _approach(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        d, R, face = self._line(envs, obs)
        behind = obs.obj_pos[envs] - d * (face + self.task.finger_depth + self.task.standoff)[:, None]
        behind[:, 2] = self.place[envs, 2] + self.task.approach_height
        self.seg.move_to(envs, t, behind, R)
        self.phase[envs] = P.APPROACH

    def _lower(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        goal = self.seg.p1[envs].copy()
        goal[:, 2] = self.place[envs, 2]
        self.seg.move_to(envs, t, goal, self.seg.R1[envs])
        self.phase[envs] = P.LOWER

    def _push(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        d, _, face = self._line(envs, obs)
        goal = self.place[envs] - d * (face + self.task.finger_depth)[:, None]
        goal[:, 2] = self.place[envs, 2]
        self.seg.bounds = (self.task.push_speed, self.task.accel, self.task.angular_speed)
        self.seg.move_to(envs, t, goal, self.seg.R1[envs])
        self.seg.bounds = (self.task.speed, self.task.accel, self.task.angular_speed)
        self.pushes[envs] += 1
        self.phase[envs] = P.PUSH

    def _back_off(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        d = self.seg.p1[envs] - self.seg.p0[envs]
        d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
        goal = self.seg.p1[envs] - d * self.task.standoff + [0.0, 0.0, self.task.approach_height]
        self.seg.move_to(envs, t, goal, self.seg.R1[envs])
        self.phase[envs] = P.BACK_OFF

    def _again(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        """Push again where the cube is off target (and pushes remain), else retreat."""
        off = np.linalg.norm(obs.obj_pos[envs, :2] - self.place[envs, :2], axis=1) > self.task.aim_tol
        again = envs[off & (self.pushes[envs] < self.task.max_pushes)]
        self._approach(again, t, obs)
        up = np.setdiff1d(envs, again)
        self.seg.move_to(up, t, self.seg.p1[up] + [0.0, 0.0, self.task.lift_height], self.seg.R1[up])
        self.phase[up] = P.RETREAT

    def _done(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        self.phase[envs] = P.DONE

    def _fail(self, mask: np.ndarray, reason: str, t: float) -> None:
        envs = np.flatnonzero(mask & (self.phase < P.DONE))
        for e in envs:
            self.reason[e], self.failed_at[e] = reason, t
        self.phase[envs] = P.FAILED
        if len(envs):
            self.seg.hold(envs, t)

    def finish(self, obs: Observation) -> list[dict]:
        """Per environment: the step reached, the expert's reason of a failure, its pushes, the target, the
        cube's start and end."""
        error = np.linalg.norm(obs.obj_pos[:, :2] - self.place[:, :2], axis=1)
        return [{"success": bool(self.phase[e] == P.DONE and error[e] <= self.task.success_tol),
                 "reason": self.reason[e] or ("" if error[e] <= self.task.success_tol else "missed_target"),
                 "phase": P(self.phase[e]).name.lower(), "pushes": int(self.pushes[e]),
                 "failed_at_s": None if np.isnan(self.failed_at[e]) else float(self.failed_at[e]),
                 "place_target": self.place[e].tolist(), "place_error_xy_m": float(error[e]),
                 "object_start_pos": self.start[e].tolist(), "object_final_pos": obs.obj_pos[e].tolist(),
                 "slip_max_m": 0.0} for e in range(len(self.place))]
