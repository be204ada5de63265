"""Bimanual insertion, ALOHA's: one arm picks a socket (a square tube), the other a square peg, both lift, meet
with the parts' axes lined up, and the peg goes into the socket (the Stationary AI). The expert, per environment
and both arms in step: above each part's grip (``grip_offsets`` from its centre, away from the other part: the
hands stay apart when the parts meet), down, close (each gripper across its part), lift; then to the
meeting poses, each part's axis along the line between the arms (``meet``: the point between the parts, ``gap``
[m] between the peg's tip and the socket's mouth); then the peg's arm puts the peg's tip on the socket's axis as
both are measured now, ``gap`` short of the mouth (align), and pushes it ``insert_depth`` [m] in at
``insert_speed`` (insert); then both hold. Failures as the two-arm lift's expert's (``grasp_missed``, ``dropped``,
``collision``, ``timeout``).

Success: the peg's tip at least ``min_depth`` [m] inside the socket's bore (either end; its centre line within the
bore), the socket ``min_lift`` [m] above its start, both held, no collision at any step. Stages: 0 nothing,
1 touched, 2 one part held, 3 both held, 4 inserted. Failure reasons: ``collision``, ``not_touched``,
``grasp_missed``, ``one_arm``, ``not_lifted``, ``misaligned`` (both up, the peg not in), ``dropped``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from app.control.motions import arm_link
from app.control.phases import InsertPhase
from app.kinematics.rotations import quat_to_matrix
from app.tasks.bimanual_lift import BimanualLiftExpert, _level, two_arm_checks
from app.tasks.object_task import ObjectTask
from app.tasks.outcome import Evaluation, TaskState
from app.tasks.registry import register_task
from app.tasks.scene_facts import SceneFacts
from app.validation import Check, CheckContext, Where

P = InsertPhase
NEAR = 0.004  # [m] the tip outside the mouth where the peg is lined up a second time
STEP = 0.01  # [m] deeper per insertion step, each from the parts as measured then
INSERT_REASONS = ("collision", "not_touched", "grasp_missed", "one_arm", "not_lifted", "misaligned", "dropped")


@register_task
@dataclass(frozen=True)
class BimanualInsertionTask(ObjectTask):
    """Insert ``peg`` (a box, longest along its x) into ``object``, the socket (a square tube along its x,
    ``socket_length`` long with a ``socket_bore`` square bore [m]); ``arms``: the socket's arm, then the peg's."""

    type: ClassVar[str] = "bimanual_insertion"
    robots: ClassVar[str] = "two arms with grippers (the Stationary AI)"
    n_arms: ClassVar[int] = 2
    config: ClassVar[str] = "configs/tasks/bimanual_insertion.yaml"
    env_id: ClassVar[str] = "app/StationaryAIBimanualInsertion-v0"
    reasons: ClassVar[tuple[str, ...]] = INSERT_REASONS
    object: str = "socket"
    peg: str = "peg"
    arms: tuple[str, str] = ("left", "right")
    peg_length: float = 0.14  # [m] the peg's size along its x (checked against the scene's)
    socket_length: float = 0.08
    socket_bore: float = 0.025
    meet: tuple[float, float, float] = (0.0, 0.0, 0.14)
    gap: float = 0.03
    insert_depth: float = 0.03
    min_depth: float = 0.02
    insert_speed: float = 0.03
    lift_height: float = 0.08
    min_lift: float = 0.05
    grip_offsets: tuple[float, float] = (0.0, 0.045)  # [m] each part's grip from its centre, away from the other

    def places(self, starts: dict, seed: int) -> np.ndarray:
        """Where the socket starts (k, 2) [m]: the parts meet in the air, nothing is put down."""
        return starts[self.object][0][:, :2].copy()

    def moved_links(self, robot) -> list[tuple[tuple, str]]:
        return [(("task", "arms"), arm_link(arm, robot, "task.arms")) for arm in self.arms]

    def arm_objects(self) -> dict[str, str]:
        return {self.arms[0]: self.object, self.arms[1]: self.peg}

    def watched(self) -> tuple[str, ...]:
        return (self.peg,)

    def evaluate(self, state: TaskState) -> Evaluation:
        """Success, stage and reason at this step (see the module docstring)."""
        s = state
        depth, off_axis = self.inserted(s.obj_pos, s.obj_quat, s.others[self.peg])
        up = s.obj_pos[:, 2] - s.start_z
        collided = s.ever_collided | s.collided
        inside = (depth >= self.min_depth) & (off_axis < self.socket_bore / 2)
        success = s.held_all & inside & (up >= self.min_lift) & ~collided
        stage = np.select([success, s.held_all, s.held, s.touched], [4, 3, 2, 1], 0)
        best = np.maximum(s.best, stage)
        reason = ["" if success[e] else "collision" if collided[e] else
                  ("not_touched", "grasp_missed", "one_arm")[best[e]] if best[e] < 3 else
                  "dropped" if not s.held_all[e] else "not_lifted" if up[e] < self.min_lift else "misaligned"
                  for e in range(len(success))]
        return Evaluation(success, stage, np.maximum(self.min_depth - depth, 0.0), s.collided, reason)

    def inserted(self, socket_pos, socket_quat, peg_pose) -> tuple[np.ndarray, np.ndarray]:
        """How deep (n,) [m] the peg's tip nearer the socket's centre is inside the bore from the nearer end, and
        how far (n,) [m] that tip is off the bore's centre line; socket_pos (n, 3), socket_quat (n, 4), peg_pose
        (n, 7)."""
        R_s, R_p = quat_to_matrix(socket_quat), quat_to_matrix(peg_pose[:, 3:])
        tips = peg_pose[:, None, :3] + np.array([1.0, -1.0])[None, :, None] * R_p[:, None, :, 0] * self.peg_length / 2
        local = np.einsum("nji,nkj->nki", R_s, tips - socket_pos[:, None, :])  # tips in the socket's frame
        k = np.argmin(np.abs(local[:, :, 0]), axis=1)
        tip = local[np.arange(len(k)), k]
        return self.socket_length / 2 - np.abs(tip[:, 0]), np.max(np.abs(tip[:, 1:]), axis=1)

    def expert(self, facts: SceneFacts) -> BimanualInsertionExpert:
        grippers = [facts.grippers[a] for a in self.arms]
        return BimanualInsertionExpert(self, [facts.halves[self.object], facts.halves[self.peg]],
                                       [facts.starts[self.object][0], facts.starts[self.peg][0]],
                                       [(g.approach_axis, g.closing_axis) for g in grippers])

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        objects = {o.name: o for o in ctx.scene.objects}
        peg = objects.get(self.peg)
        return super().checks(at, ctx) + two_arm_checks(self, at, ctx) + [
            (at("peg"), peg is not None and peg.shape == "box" and self.peg != self.object,
             f"{self.peg!r} must be a box of the scene other than {self.object!r}; objects: {sorted(objects)}"),
            (at("peg_length"), peg is None or abs(peg.size[0] - self.peg_length) < 1e-9,
             f"{self.peg_length} m: must be {self.peg!r}'s size along x ({None if peg is None else peg.size[0]} m)"),
            (at("socket_bore"), peg is None or peg.shape != "box" or max(peg.size[1:]) < self.socket_bore,
             f"{self.socket_bore} m: the peg ({None if peg is None else list(peg.size)}) must fit the bore"),
            (at("min_depth"), 0 < self.min_depth <= self.insert_depth < self.socket_length,
             f"needs 0 < min_depth <= insert_depth < socket_length, got {self.min_depth}, {self.insert_depth}"),
        ] + [(at(k), getattr(self, k) > 0, f"must be > 0, got {getattr(self, k)}")
             for k in ("socket_length", "gap", "insert_speed")]


class BimanualInsertionExpert(BimanualLiftExpert):
    """Both arms' steps in every environment (see the module docstring): the lift's expert with each arm gripping
    its own part at its centre, then meet, align and insert."""

    phases: ClassVar[type] = InsertPhase
    after: ClassVar[dict] = {P.PRE_GRASP: P.DESCEND, P.DESCEND: P.CLOSE, P.LIFT: P.MEET, P.MEET: P.ALIGN,
                             P.ALIGN: P.INSERT, P.INSERT: P.HOLD}

    def __init__(self, *args):
        super().__init__(*args)
        self._standoff = np.zeros(len(self.place))  # [m] the tip's goal outside the socket's mouth (< 0: inside)

    def _grips(self, envs: np.ndarray, seen: list) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per arm: closing across its part ``grip_offsets`` from the part's centre, away from the other part (the
        socket at its centre, where the peg's push cannot turn it in the fingers; the peg towards its far end, so
        the hands stay apart when the parts meet)."""
        out = []
        for k, o in enumerate(seen):
            R = quat_to_matrix(o.obj_quat[envs])
            along, centre, other = _level(R[:, :, 0]), o.obj_pos[envs], seen[1 - k].obj_pos[envs]
            away = -np.sign(np.einsum("ki,ki->k", other - centre, along))
            reach = self.task.grip_offsets[k]
            out.append((centre + along * (np.where(away == 0, 1.0, away) * reach)[:, None],
                        self._down(k, envs, o, _level(R[:, :, 1]))))
        return out

    def _step(self, envs: np.ndarray, t: float, seen: list, phase) -> None:
        """The lift's steps, then: meet; align (the tip ``gap``, then ``NEAR``, short of the mouth); insert (STEP
        deeper each time, measured again, down to ``insert_depth``); hold."""
        if not len(envs) or phase not in (P.MEET, P.ALIGN, P.INSERT, P.HOLD):
            super()._step(envs, t, seen, phase)
            return
        if phase == P.MEET:
            self._meet(envs, t, seen)
            self.phase[envs] = P.MEET
            return
        if phase == P.ALIGN:  # met: the tip gap short of the mouth
            self._standoff[envs] = self.task.gap
            self.phase[envs] = P.ALIGN
        elif phase == P.INSERT:  # an alignment arrived: once more near the mouth, then the first step in
            far = self._standoff[envs] > NEAR + 1e-9
            self._standoff[envs] = np.where(far, NEAR, -STEP)
            self.phase[envs] = np.where(far, P.ALIGN, P.INSERT)
        else:  # an insertion step arrived: deeper until insert_depth, then hold
            done = self._standoff[envs] <= -self.task.insert_depth + 1e-9
            self._standoff[envs] = np.maximum(self._standoff[envs] - STEP, -self.task.insert_depth)
            self.phase[envs] = np.where(done, P.HOLD, P.INSERT)
        self._line_up(envs[self.phase[envs] != P.HOLD], t, seen)

    def _meet(self, envs: np.ndarray, t: float, seen: list) -> None:
        """Both parts to either side of ``meet`` along the line between the hands, their axes on it."""
        task, (socket, peg) = self.task, seen
        u = _level(peg.ee_pos[envs] - socket.ee_pos[envs])  # from the socket's hand to the peg's
        across = np.stack([-u[:, 1], u[:, 0], np.zeros(len(envs))], axis=1)
        meet = np.asarray(task.meet, dtype=float)
        centres = (meet - u * (task.gap / 2 + task.socket_length / 2), meet + u * (task.gap / 2 + task.peg_length / 2))
        for k, (o, centre) in enumerate(zip(seen, centres)):
            R = self._down(k, envs, o, across)
            held = np.einsum("kji,kj->ki", o.ee_rot[envs], o.obj_pos[envs] - o.ee_pos[envs])  # in the hand's frame
            self.segs[k].move_to(envs, t, centre - np.einsum("kij,kj->ki", R, held), R)

    def _line_up(self, envs: np.ndarray, t: float, seen: list) -> None:
        """The peg's hand moves the peg's tip onto the socket's axis as both are now, ``_standoff`` outside its
        mouth (negative: inside), at ``insert_speed`` once the tip is near."""
        if not len(envs):
            return
        task, (socket, peg) = self.task, seen
        axis = quat_to_matrix(socket.obj_quat[envs])[:, :, 0]
        axis *= np.sign(np.einsum("ki,ki->k", axis, peg.obj_pos[envs] - socket.obj_pos[envs]))[:, None]
        mouth = socket.obj_pos[envs] + axis * task.socket_length / 2  # the end facing the peg; axis points out of it
        peg_axis = quat_to_matrix(peg.obj_quat[envs])[:, :, 0]
        peg_axis *= np.sign(np.einsum("ki,ki->k", peg_axis, axis))[:, None]  # along the socket's, out of the mouth
        tip = peg.obj_pos[envs] - peg_axis * task.peg_length / 2
        goal = mouth + axis * self._standoff[envs, None]
        seg, slow = self.segs[1], self._standoff[envs] <= NEAR + 1e-9
        for k, speed in ((slow, task.insert_speed), (~slow, task.speed)):
            seg.bounds = (speed, task.accel, task.angular_speed)
            seg.move_to(envs[k], t, (peg.ee_pos[envs] + goal - tip)[k], seg.R1[envs[k]])
        seg.bounds = (task.speed, task.accel, task.angular_speed)
        self.segs[0].hold(envs, t)
