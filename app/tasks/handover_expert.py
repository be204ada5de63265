"""Handing an object from one arm to the other, the sequence of Trossen's Stationary AI demo, as a phase machine
per environment fed with both arms' observations every control tick.

The giver picks the object from above (closing across two faces, ``give_depth`` below its top), lifts it, and
turns it to the meeting point with its gripper level, pointing at the taker. The taker approaches level from its
side and closes across the object's top and bottom at the other end (``take_depth`` from that face; sharing the
giver's faces would let the two grips wedge the object against each other), the giver opens and backs away, and
the taker turns its gripper down, carries the object over the place point and puts it down, opens and rises.
Each goal comes from the object's measured pose when the phase starts; a phase ends on a condition (both arms
at their goals, both fingers on the object for ``close_time``, fingers open) or fails after ``phase_timeout``.
Failures: ``unreachable``, ``ungraspable`` (before anything moves), ``grasp_missed``, ``slipped``, ``dropped``,
``collision``, ``timeout``; ``misplaced`` for a finished episode off target. Poses are in the environment frame.
"""

from __future__ import annotations

import numpy as np

from app.control.motion_protocol import MotionBase, Targets
from app.control.observation import Observation
from app.control.phases import HANDOVER_PHASES, HandoverPhase, phase_codes
from app.control.segments import Segments, segment_targets
from app.tasks.handover_poses import HandoverPoses, level_closing
from app.tasks.holding import check_hold, in_hand, reached
from app.tasks.object_task import ObjectTask

Step = HandoverPhase
STEPS = HANDOVER_PHASES
GIVER, TAKER = 0, 1


class HandoverExpert(MotionBase):
    """The handover of every environment (see the module docstring).

    Args:
        task: the settings. half: the object's half extents [m] (3,) (a box's). place_xy (n_envs, 2) [m],
        rest_z (n_envs,) [m]: where the object ends and its resting centre height. max_opening: each arm's open
        gap [m] (2,). axes: the grippers' (approach_axis, closing_axis). reach: ``reach(arm, pos (k, 3),
        rot (k, 3, 3)) -> (k,)`` gives, per pose, the smallest distance of the arm's joints from their limits in the
        IK's answer [rad or m] (-inf where the IK does not reach it).
    """

    n_targets = 2
    feedback = True
    segments_cls = Segments  # what _begin makes (a planned hand-over's follow tracks)

    def __init__(self, task: ObjectTask, half: np.ndarray, place_xy: np.ndarray, rest_z: np.ndarray,
                 max_opening: np.ndarray, axes: tuple[str, str], reach):
        self.task, self.half, self.axes, self.reach = task, np.asarray(half, dtype=float), axes, reach
        self.arms, self.object_name = (task.giver, task.taker), task.object
        n = len(place_xy)
        self.place = np.column_stack([place_xy, np.asarray(rest_z, dtype=float).reshape(n)])
        self.max_opening = np.asarray(max_opening, dtype=float)
        self.meet = np.asarray(task.meet, dtype=float)
        self.step = np.zeros(n, dtype=np.int8)
        self.reason, self.failed_arm = [""] * n, [""] * n
        self.started: list[dict[str, float]] = [{} for _ in range(n)]
        self.closing = np.zeros((2, n))
        self.segs: list[Segments] | None = None
        self.poses: HandoverPoses | None = None  # set on the first tick, from where the arms and object are
        self._held = np.zeros((2, n, 3))  # object centre in each arm's end-effector frame when it took hold
        self._contact_time, self._lost_time = np.zeros((2, n)), np.zeros((2, n))
        self.slip_max = np.zeros(n)
        self.obj_start: tuple[np.ndarray, np.ndarray] | None = None
        self._last_t = 0.0

    # ------------------------------------------------------------------ what the runner reads
    def __call__(self, t: float) -> Targets:
        return segment_targets(self.segs, self.place, t, k=2)  # before the first observation: the place points

    @property
    def marks(self) -> np.ndarray:
        return self.place[:, None].copy()

    @property
    def released(self) -> np.ndarray:
        """(n_envs,) bool: the fingers may touch the object (from the giver's descent until done)."""
        return (self.step >= Step.DESCEND) & (self.step <= Step.RETREAT)

    @property
    def exchanging(self) -> np.ndarray:
        """(n_envs,) bool: the two grippers work side by side on the object (their fingers come within cm)."""
        return (self.step >= Step.TO_MEET) & (self.step <= Step.GIVE_RETREAT)

    @property
    def holder(self) -> np.ndarray:
        """(n_envs,) int: the arm (GIVER 0, TAKER 1) carrying the object clear of the table and of the other hand
        (the giver to the meeting point, the taker to the place), -1 otherwise."""
        return np.where(self.step == Step.TO_MEET, GIVER, np.where(self.step == Step.CARRY, TAKER, -1))

    def codes(self) -> np.ndarray:
        """Per environment the overlay's word index (app.control.phases.episode_words)."""
        return phase_codes(STEPS, self.step, Step.FAILED, self.reason)

    # ------------------------------------------------------------------ one tick
    def observe(self, t: float, obs: dict[str, Observation]) -> None:
        """Advance every environment with what both arms measured at t [s] (``obs`` by arm name)."""
        dt, self._last_t = t - self._last_t, t
        g, k = obs[self.arms[GIVER]], obs[self.arms[TAKER]]
        if self.segs is None:
            self._begin(t, g, k)
            return
        st = self.step.copy()
        running = st < Step.DONE
        self._fail(running & (g.collided | k.collided), "collision", t, np.where(g.collided, GIVER, TAKER))
        ends = np.maximum.reduce([s.t0 + s.T for s in self.segs])
        self._fail(running & (t > ends + self.task.phase_timeout), "timeout", t, self._active_arm(st))
        self._watch_hold(dt, t, g, k)
        self._closings(t, dt, g, k)
        at = [self.segs[a].done(t) & self._reached(a, o) for a, o in ((GIVER, g), (TAKER, k))]
        moves = ((Step.PRE_GRASP, at[GIVER], self._descend), (Step.DESCEND, at[GIVER], self._close_giver),
                 (Step.LIFT, at[GIVER], self._to_meet), (Step.TO_MEET, at[GIVER] & at[TAKER], self._take),
                 (Step.TAKE, at[TAKER], self._close_taker), (Step.GIVE_RETREAT, at[GIVER], self._carry),
                 (Step.CARRY, at[TAKER], self._lower), (Step.PLACE, at[TAKER], self._open_taker),
                 (Step.RETREAT, at[TAKER], self._done))
        for step, arrived, nxt in moves:
            envs = np.flatnonzero(arrived & (st == step) & (self.step == step))
            if len(envs):
                nxt(envs, t, g, k)

    # ------------------------------------------------------------------ the start
    def _begin(self, t: float, g: Observation, k: Observation) -> None:
        """Segments from where the arms are; the geometry of every environment; fail what cannot be done."""
        task = self.task
        bounds = (task.speed, task.accel, task.angular_speed)
        self.segs = [self.segments_cls(o.ee_pos, o.ee_rot, *bounds) for o in (g, k)]
        self.obj_start = (g.obj_pos.copy(), g.obj_quat.copy())
        to_giver = g.ee_pos - self.meet
        to_giver[:, 2] = 0.0
        u = to_giver / np.linalg.norm(to_giver, axis=1, keepdims=True)
        n = len(self.place)
        self.poses = HandoverPoses(u, level_closing(g.obj_quat, u), self.half, task.give_depth, task.take_depth,
                                   self.meet, self.axes, np.ones(n))
        self._fail(self._choose_grips(g.obj_pos), "unreachable", t, np.full(n, -1))
        wide = 2 * self.half[:2].max() > self.max_opening.min() - 0.005  # the widest face must fit either hand
        self._fail(np.full(n, wide), "ungraspable", t, np.full(n, -1))
        ok = np.flatnonzero(self.step == Step.PRE_GRASP)
        pos, rot = self.poses.pick(g.obj_pos[ok], ok)
        self.segs[GIVER].move_to(ok, t, pos + [0.0, 0.0, task.approach_height], rot)
        self.segs[TAKER].move_to(ok, t, *self.poses.take(self.meet, ok, back=task.approach_height))
        self._enter(ok, Step.PRE_GRASP, t)

    def _choose_grips(self, obj_pos: np.ndarray) -> np.ndarray:
        """Each arm's closing direction (one of two opposite ones) whose poses keep its joints furthest from their
        limits (one batched IK call per pose and direction); (n_envs,) bool: no choice reaches every pose."""
        envs, P = np.arange(len(self.place)), self.poses
        above = self.place + [0.0, 0.0, self.task.lift_height]
        margins = []
        for sign in (1.0, -1.0):
            p = P._replace(C=sign * P.C, up=np.full(len(envs), sign))
            giver = np.minimum(self.reach(GIVER, *p.pick(obj_pos, envs)), self.reach(GIVER, *p.meet_pose(envs)))
            held = p.held(self.task.take_depth, len(envs))
            taker = np.minimum(self.reach(TAKER, *p.take(self.meet, envs)), self.reach(TAKER, *p.place(above, envs, held)))
            margins.append((giver, taker))
        flip_giver, flip_taker = margins[1][0] > margins[0][0], margins[1][1] > margins[0][1]
        self.poses = P._replace(C=np.where(flip_giver[:, None], -P.C, P.C), up=np.where(flip_taker, -1.0, 1.0))
        best = np.minimum(np.maximum(margins[0][0], margins[1][0]), np.maximum(margins[0][1], margins[1][1]))
        return ~np.isfinite(best)

    # ------------------------------------------------------------------ steps
    def _descend(self, envs, t, g, k) -> None:
        self.segs[GIVER].move_to(envs, t, *self.poses.pick(g.obj_pos[envs], envs))
        self._enter(envs, Step.DESCEND, t)

    def _close_giver(self, envs, t, g, k) -> None:
        self._close(GIVER, envs, t, Step.CLOSE)

    def _to_meet(self, envs, t, g, k) -> None:
        self.segs[GIVER].move_to(envs, t, *self.poses.meet_pose(envs, self._held[GIVER, envs]))
        self._enter(envs, Step.TO_MEET, t)

    def _take(self, envs, t, g, k) -> None:
        self.segs[TAKER].move_to(envs, t, *self.poses.take(g.obj_pos[envs], envs))
        self._enter(envs, Step.TAKE, t)

    def _close_taker(self, envs, t, g, k) -> None:
        self._close(TAKER, envs, t, Step.TAKE_CLOSE)

    def _close(self, arm: int, envs: np.ndarray, t: float, step: Step) -> None:
        """The arm's fingers start closing on the object (its contact time from zero): the step ``step``."""
        self.closing[arm, envs] = 1.0
        self._contact_time[arm, envs] = 0.0
        self._enter(envs, step, t)

    def _carry(self, envs, t, g, k) -> None:
        above = self.place[envs] + [0.0, 0.0, self.task.lift_height]
        self.segs[TAKER].move_to(envs, t, *self.poses.place(above, envs, in_hand(k, envs)))
        self._enter(envs, Step.CARRY, t)

    def _lower(self, envs, t, g, k) -> None:
        """Down onto the place point, aimed with where the object sits in the hand now (it settles in the fingers
        when the giver lets go and when the hand turns down)."""
        centre = self.place[envs] + [0.0, 0.0, 0.003]
        self.segs[TAKER].move_to(envs, t, *self.poses.place(centre, envs, in_hand(k, envs)))
        self._enter(envs, Step.PLACE, t)

    def _open_taker(self, envs, t, g, k) -> None:
        self.closing[TAKER, envs] = 0.0
        self._enter(envs, Step.OPEN, t)

    def _done(self, envs, t, g, k) -> None:
        self._enter(envs, Step.DONE, t)

    def _closings(self, t: float, dt: float, g: Observation, k: Observation) -> None:
        """Closing ends when both fingers have held the object for close_time; opening when the fingers are open."""
        for arm, obs, step, nxt in ((GIVER, g, Step.CLOSE, Step.LIFT), (TAKER, k, Step.TAKE_CLOSE, Step.GIVE_OPEN)):
            closing, both = self.step == step, obs.contact.all(axis=1)
            self._contact_time[arm] = np.where(closing & both, self._contact_time[arm] + dt, 0.0)
            self._fail(closing & ~both & (obs.closing > 0.97), "grasp_missed", t, arm)
            held = np.flatnonzero((self.step == step) & (self._contact_time[arm] >= self.task.close_time))
            if len(held):
                self._held[arm, held] = in_hand(obs, held)
                self._after_hold(arm, held, t, obs)
                self._enter(held, nxt, t)
        for arm, obs, step, nxt, away in ((GIVER, g, Step.GIVE_OPEN, Step.GIVE_RETREAT, self.poses.u),
                                          (TAKER, k, Step.OPEN, Step.RETREAT, np.array([[0.0, 0.0, 1.0]]))):
            opened = np.flatnonzero((self.step == step) & (obs.closing < 0.05))
            if len(opened):
                seg = self.segs[arm]
                back = seg.p1[opened] + self.task.approach_height * np.broadcast_to(away, (len(self.place), 3))[opened]
                seg.move_to(opened, t, back, seg.R1[opened])
                self._enter(opened, nxt, t)

    def _after_hold(self, arm: int, envs: np.ndarray, t: float, obs: Observation) -> None:
        """The giver lifts what it grasped; the taker's grasp lets the giver open."""
        if arm == GIVER:
            seg = self.segs[GIVER]
            seg.move_to(envs, t, seg.p1[envs] + [0.0, 0.0, self.task.lift_height], seg.R1[envs])
        else:
            self.closing[GIVER, envs] = 0.0

    def _watch_hold(self, dt: float, t: float, g: Observation, k: Observation) -> None:
        """While an arm carries the object alone or with the other: slip in its fingers and lost contact."""
        for arm, obs, first, last in ((GIVER, g, Step.LIFT, Step.TAKE_CLOSE), (TAKER, k, Step.GIVE_OPEN, Step.PLACE)):
            holding = (self.step >= first) & (self.step <= last)
            hold = check_hold(obs, self._held[arm], holding, self._lost_time[arm], dt, self.task.slip_tol)
            self.slip_max = np.maximum(self.slip_max, hold.slip)
            self._lost_time[arm] = hold.lost_time
            self._fail(hold.dropped, "dropped", t, arm)
            self._fail(hold.slipped, "slipped", t, arm)

    # ------------------------------------------------------------------ bookkeeping
    def _reached(self, arm: int, obs: Observation) -> np.ndarray:
        return reached(obs, self.segs[arm], self.task.pos_tol, self.task.rot_tol)

    def _active_arm(self, step: np.ndarray) -> np.ndarray:
        """The arm whose motion a step waits for (the taker's from the hand-over on)."""
        return np.where((step >= Step.TAKE) & (step != Step.GIVE_OPEN) & (step != Step.GIVE_RETREAT), TAKER, GIVER)

    def _enter(self, envs: np.ndarray, step: Step, t: float) -> None:
        self.step[envs] = step
        for e in envs:
            self.started[e][STEPS[step]] = round(float(t), 4)

    def _fail(self, mask: np.ndarray, reason: str, t: float, arm) -> None:
        """Environments in ``mask`` still running fail with ``reason`` (``arm``: which, -1 neither); both hold."""
        envs = np.flatnonzero(mask & (self.step < Step.DONE))
        arm = np.broadcast_to(np.asarray(arm), mask.shape)
        for e in envs:
            self.step[e], self.reason[e] = Step.FAILED, reason
            self.failed_arm[e] = self.arms[arm[e]] if arm[e] >= 0 else ""
            self.started[e]["failed"] = round(float(t), 4)
        if len(envs) and self.segs is not None:
            for seg in self.segs:
                seg.hold(envs, t)

    # ------------------------------------------------------------------ the end
    def finish(self, obs: dict[str, Observation]) -> list[dict]:
        """Per environment: success, the step reached, a failure's reason and arm, the place target and error,
        the object's start and end, the largest slip. ``obs``: the final state by arm."""
        k = obs[self.arms[TAKER]]
        clear = (k.closing < 0.1) & ~k.contact.any(axis=1) & ~obs[self.arms[GIVER]].contact.any(axis=1)
        placed, error = self.task.placement(k.obj_pos, k.obj_speed, self.place, clear)
        out = []
        for e in range(len(self.place)):
            done = self.step[e] == Step.DONE
            success = bool(done and placed[e])
            reason = self.reason[e] or ("" if success else "misplaced" if done else "timeout")
            out.append({"success": success, "reason": reason, "phase": STEPS[self.step[e]],
                        "failed_arm": self.failed_arm[e] or None, "phase_started_s": self.started[e],
                        "place_target": self.place[e], "place_error_xy_m": float(error[e]),
                        "object_start_pos": self.obj_start[0][e] if self.obj_start else None,
                        "object_final_pos": k.obj_pos[e], "object_final_quat_wxyz": k.obj_quat[e],
                        "slip_max_m": float(self.slip_max[e])})
        return out
