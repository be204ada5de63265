"""Pick-and-place as a phase machine per environment, fed with observations every control tick.

pre_grasp -> descend -> close -> lift -> carry -> place -> open -> retreat -> done. A motion phase ends when
its segment (app.control.segments) has run and the end effector is within ``pos_tol``/``rot_tol`` of its
goal; ``close`` when both fingers have touched the object for ``close_time``; ``open`` when the fingers are
open. Each phase's goal comes from the object's actual pose when the phase starts. A phase that does not end
within its segment's time plus ``phase_timeout`` fails with ``timeout``; other failures: ``unreachable`` /
``ungraspable`` (grasp ranking, before the arm moves), ``grasp_missed`` (the fingers closed on nothing),
``slipped`` (the object moved by more than ``slip_tol`` in the gripper's frame), ``dropped`` (a finger lost
contact while carrying), ``collision`` (see Observation.collided). Poses are in the environment's frame.
"""

from __future__ import annotations

import numpy as np

from app.control.motion_protocol import MotionBase, Targets
from app.control.observation import Observation
from app.control.phases import PHASES, Phase, PickLog
from app.control.segments import Segments, segment_targets
from app.kinematics.rotations import axis_vector, quat_to_matrix
from app.tasks.grasps import GraspGeometry, GraspPlan, grasp_poses, object_yaw, rank_grasps
from app.tasks.holding import check_hold, in_hand, reached
from app.tasks.object_task import ObjectTask


class PickPlaceExpert(MotionBase):
    """The phase machine of every environment (see the module docstring).

    Args:
        task: The task's settings. model: The robot's RobotModel; ee_link: its end effector; base: the
            base's BaseFrame. geometry: the object's GraspGeometry (its heights set from the task here).
        place_xy: (n_envs, 2) [m]; rest_z: the object's resting centre height [m] (its start).
        max_opening: the open fingers' gap [m]; axes: (approach_axis, closing_axis) of the end effector;
        arm_dofs: the DOFs the arm controller moves. collision: a CollisionModel (the table, boxes, the arm) that
            grasp candidates must clear by ``min_distance`` [m] at every pose (None: not checked).
    """

    n_targets = 1
    feedback = True
    can_restart = True
    segments_cls = Segments  # what _begin makes (a planned pick's follow tracks)

    def __init__(self, task: ObjectTask, model, ee_link: str, base, geometry: GraspGeometry,
                 place_xy: np.ndarray, rest_z: np.ndarray, max_opening: float, axes: tuple[str, str],
                 arm_dofs: np.ndarray, collision=None, min_distance: float = 0.0):
        self.task, self.model, self.ee_link, self.base = task, model, ee_link, base
        self.geo = geometry._replace(approach_height=task.approach_height, lift_height=task.lift_height,
                                     depths=task.grasp_depths, tilts=task.grasp_tilts, n_yaws=task.grasp_yaws)
        n = len(place_xy)
        self.place = np.column_stack([place_xy, np.asarray(rest_z, dtype=float).reshape(n)])
        self.max_opening, self.axes, self.arm_dofs = max_opening, axes, arm_dofs
        self.collision, self.min_distance = collision, min_distance
        self.log = PickLog(n)
        self.closing = np.zeros(n)
        gap = task.release_gap  # the fingers open this far [m] to let go (None: fully)
        self.release = 0.0 if gap is None else 1.0 - min(1.0, gap / max_opening)  # its closing fraction
        self.plan: GraspPlan | None = None
        self.seg: Segments | None = None
        self._contact_time, self._lost_time = np.zeros(n), np.zeros(n)
        self._held_rel = np.zeros((n, 3))  # the object's centre in the end-effector frame at the grasp
        self._held_offset = np.zeros((n, 3))  # end effector - object centre at the grasp, environment axes
        self._last_t = 0.0
        self._restart = np.zeros(0, dtype=int)

    # ------------------------------------------------------------------ what the runner reads
    def __call__(self, t: float) -> Targets:
        return segment_targets(None if self.seg is None else [self.seg], self.place, t)

    @property
    def marks(self) -> np.ndarray:
        """What a picture marks: each environment's place target (n_envs, 1, 3) [m]."""
        return self.place[:, None].copy()

    @property
    def released(self) -> np.ndarray:
        """(n_envs,) bool: the fingers may touch the object (from ``descend`` on, until a failure)."""
        ph = self.log.phase
        return (ph >= Phase.DESCEND) & (ph <= Phase.RETREAT)

    @property
    def holding(self) -> np.ndarray:
        """(n_envs,) bool: the object is carried clear of the table (carry); a collision model may then move it with
        the gripper (lift and place start and end on the table, where the held object's margin cannot hold)."""
        return self.log.phase == Phase.CARRY

    @property
    def holder(self) -> np.ndarray:
        """(n_envs,) int: 0 where the one gripper carries the object clear of the table (``holding``), else -1."""
        return np.where(self.holding, 0, -1)

    @property
    def object_name(self) -> str:
        return self.task.object

    def codes(self) -> np.ndarray:
        """Per environment its phase-or-failure code (app.control.phases.PickLog.codes)."""
        return self.log.codes()

    # ------------------------------------------------------------------ one tick
    def observe(self, t: float, obs: Observation) -> None:
        """Advance every environment's phase machine with what was measured at t [s]."""
        dt, self._last_t = t - self._last_t, t
        if self.seg is None:
            self._begin(t, obs)
            return
        if len(self._restart):
            envs, self._restart = self._restart, np.zeros(0, dtype=int)
            self._plan(envs, t, obs)
        ph = self.log.phase.copy()  # each environment takes at most one step per tick
        moving = (ph <= Phase.RETREAT) & (ph != Phase.CLOSE) & (ph != Phase.OPEN)
        arrived = moving & self.seg.done(t) & self._reached(obs)
        active = ph <= Phase.RETREAT
        self._fail(active & obs.collided, "collision", t)
        late = active & (t > self.seg.t0 + self.seg.T + self.task.phase_timeout)
        self._fail(late & (ph == Phase.CLOSE), "grasp_missed", t)
        self._fail(late & (self.log.phase <= Phase.RETREAT), "timeout", t)
        self._watch_hold(t, dt, obs)
        self._close_and_open(t, dt, obs)
        for phase, nxt in ((Phase.PRE_GRASP, self._descend), (Phase.DESCEND, self._close), (Phase.LIFT, self._carry),
                           (Phase.CARRY, self._lower), (Phase.PLACE, self._open), (Phase.RETREAT, self._done)):
            envs = np.flatnonzero(arrived & (ph == phase) & (self.log.phase == phase))
            if len(envs):
                nxt(envs, t, obs)

    def restart(self, envs) -> None:
        """Pick again in environments ``envs`` from where things are at the next tick (the GUI's key)."""
        self._restart = np.union1d(self._restart, np.asarray(envs, dtype=int)).astype(int)

    def _begin(self, t: float, obs: Observation) -> None:
        """The first tick: rank the grasps, start from where the arm is, fail what cannot be grasped."""
        task = self.task
        self.seg = self.segments_cls(obs.ee_pos, obs.ee_rot, task.speed, task.accel, task.angular_speed)
        self.log.start(obs.obj_pos, obs.obj_quat)
        self._plan(np.arange(len(self.place)), t, obs)

    def _plan(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        """Rank the grasps of ``envs`` (one batched IK call), then pre-grasp or fail each of them."""
        plan = rank_grasps(self.model, self.ee_link, self.base, self.geo, obs.obj_pos[envs], obs.obj_quat[envs],
                           self.place[envs], obs.q[envs], self.max_opening, *self.axes, arm_dofs=self.arm_dofs,
                           collision=self.collision, min_distance=self.min_distance, prefer=self.task.grasp_choice)
        if self.plan is None:
            self.plan = plan
        else:
            for name, value in zip(plan._fields, plan):
                if isinstance(value, np.ndarray):
                    getattr(self.plan, name)[envs] = value
            for k, e in enumerate(envs):
                self.plan.reason[e] = plan.reason[k]
        self.log.reset(envs)
        self.closing[envs] = 0.0
        for k in np.flatnonzero(~plan.ok):
            self.log.fail(envs[k], plan.reason[k], t)
        self._goto(envs[plan.ok], t, obs, pose=0, phase=Phase.PRE_GRASP)

    def _goto(self, envs: np.ndarray, t: float, obs: Observation, pose: int, phase: Phase) -> None:
        """Start segments of ``envs`` to grasp pose ``pose`` (0 pre-grasp, 1 grasp) of the object as it is now."""
        if not len(envs):
            return
        p = self.plan
        yaw = object_yaw(obs.obj_quat[envs]) + p.yaw_offset[envs]
        depth_frac = p.depth[envs] / (2 * self.geo.half[2])
        pos, rot = grasp_poses(self.geo, obs.obj_pos[envs], yaw, depth_frac, p.tilt[envs], self.place[envs],
                               *self.axes)
        self.seg.move_to(envs, t, pos[:, pose], rot[:, pose])
        self.log.enter(envs, phase, t)

    def _descend(self, envs, t, obs) -> None:
        self._goto(envs, t, obs, pose=1, phase=Phase.DESCEND)

    def _close(self, envs, t, obs) -> None:
        self.closing[envs] = 1.0
        self._contact_time[envs] = 0.0
        self.log.enter(envs, Phase.CLOSE, t)

    def _close_and_open(self, t: float, dt: float, obs: Observation) -> None:
        """``close`` ends when both fingers have held the object for close_time (or fails when they closed on
        nothing); ``open`` when the fingers are open."""
        ph, both = self.log.phase.copy(), obs.contact.all(axis=1)
        closing = ph == Phase.CLOSE
        self._contact_time = np.where(closing & both, self._contact_time + dt, 0.0)
        self._fail(closing & ~both & (obs.closing > 0.97), "grasp_missed", t)
        grasped = np.flatnonzero((self.log.phase == Phase.CLOSE) & (self._contact_time >= self.task.close_time))
        if len(grasped):
            d = obs.obj_pos[grasped] - obs.ee_pos[grasped]
            self._held_rel[grasped] = in_hand(obs, grasped)
            self._held_offset[grasped] = -d
            up = np.array([0.0, 0.0, self.task.lift_height])
            self.seg.move_to(grasped, t, self.seg.p1[grasped] + up, self.seg.R1[grasped])
            self.log.enter(grasped, Phase.LIFT, t)
        opening = (ph == Phase.OPEN) & (self.log.phase == Phase.OPEN)
        opened = np.flatnonzero(opening & (obs.closing < self.release + 0.05))
        if len(opened):
            self._retreat(opened, t, obs)

    def _retreat(self, envs: np.ndarray, t: float, obs: Observation) -> None:
        back = self.task.approach_height * self._approach_world(envs)
        self.seg.move_to(envs, t, self.seg.p1[envs] - back, self.seg.R1[envs])
        self.log.enter(envs, Phase.RETREAT, t)

    def _approach_world(self, envs: np.ndarray) -> np.ndarray:
        """The approach direction (k, 3) of the segments' goal orientations."""
        return self.seg.R1[envs] @ axis_vector(self.axes[0])

    def _watch_hold(self, t: float, dt: float, obs: Observation) -> None:
        """While carrying: slip in the gripper's frame and lost contact."""
        ph = self.log.phase
        holding = (ph >= Phase.LIFT) & (ph <= Phase.PLACE)
        hold = check_hold(obs, self._held_rel, holding, self._lost_time, dt, self.task.slip_tol)
        self.log.slip_max = np.maximum(self.log.slip_max, hold.slip)
        self._lost_time = hold.lost_time
        self._fail(hold.dropped, "dropped", t)  # out of the grip
        self._fail(hold.slipped, "slipped", t)  # moved in the fingers, still between them

    def _carry(self, envs, t, obs) -> None:
        goal = self.place[envs] + self._held_offset[envs] + [0.0, 0.0, self.geo.place_drop + self.task.lift_height]
        self.seg.move_to(envs, t, goal, self.seg.R1[envs])
        self.log.enter(envs, Phase.CARRY, t)

    def _lower(self, envs, t, obs) -> None:
        offset = self._held_offset[envs]
        if self.task.place_by_bottom:  # the object's bottom as it hangs in the fingers now goes over the place
            up = quat_to_matrix(obs.obj_quat[envs])[:, :, 2] * self.geo.half[2]
            offset = obs.ee_pos[envs] - (obs.obj_pos[envs] - up) - [0.0, 0.0, self.geo.half[2]]
        goal = self.place[envs] + offset + [0.0, 0.0, self.geo.place_drop]
        self.seg.move_to(envs, t, goal, self.seg.R1[envs])
        self.log.enter(envs, Phase.PLACE, t)

    def _open(self, envs, t, obs) -> None:
        self.closing[envs] = self.release
        self.log.enter(envs, Phase.OPEN, t)

    def _done(self, envs, t, obs) -> None:
        self.log.enter(envs, Phase.DONE, t)

    def _reached(self, obs: Observation) -> np.ndarray:
        return reached(obs, self.seg, self.task.pos_tol, self.task.rot_tol)

    def _fail(self, mask: np.ndarray, reason: str, t: float) -> None:
        """Environments in ``mask`` still running fail with ``reason``: the arm holds where its target is."""
        envs = np.flatnonzero(mask & (self.log.phase <= Phase.RETREAT))
        for e in envs:
            self.log.fail(e, reason, t)
        if len(envs):
            self.seg.hold(envs, t)

    # ------------------------------------------------------------------ the end
    def finish(self, obs: Observation) -> list[dict]:
        """Per environment: success, the phase reached, the reason of a failure, the grasp chosen, the place
        target, the object's start and end poses, the largest slip. ``obs``: the final state."""
        clear = (obs.closing < self.release + 0.1) & ~obs.contact.any(axis=1)
        placed, _ = self.task.placement(obs.obj_pos, obs.obj_speed, self.place, clear)
        return self.log.results(obs, self.place, placed, self.plan)


__all__ = ["PHASES", "Phase", "PickPlaceExpert"]
