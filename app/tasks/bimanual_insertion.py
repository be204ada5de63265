"""Bimanual insertion, ALOHA's: one arm picks a socket (a square tube), the other a square peg, both lift, meet
with the parts' axes lined up, and the peg goes into the socket (the Stationary AI). The expert, per environment
and both arms in step: above each part ``grip_inset`` in from its end away from the other part (so the hands stay
apart when the parts meet), down, close (each gripper across its part), lift; then to the
meeting poses, each part's axis along the line between the arms (``meet``: the point between the parts, ``gap``
[m] between the peg's tip and the socket's mouth); then the peg's arm lines the peg up with the socket's axis as
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

from app.control.phases import InsertPhase
from app.kinematics.rotations import quat_to_matrix
from app.tasks.bimanual_lift import BimanualLiftExpert, BimanualLiftTask, _level
from app.tasks.grasps import grasp_rotation
from app.tasks.outcome import Evaluation, TaskState
from app.tasks.registry import register_task
from app.tasks.scene_facts import SceneFacts
from app.validation import Check, CheckContext, Where

P = InsertPhase
INSERT_REASONS = ("collision", "not_touched", "grasp_missed", "one_arm", "not_lifted", "misaligned", "dropped")


@register_task
@dataclass(frozen=True)
class BimanualInsertionTask(BimanualLiftTask):
    """Insert ``peg`` (a box, longest along its x) into ``object``, the socket (a square tube along its x,
    ``socket_length`` long with a ``socket_bore`` square bore [m]); ``arms``: the socket's arm, then the peg's."""

    type: ClassVar[str] = "bimanual_insertion"
    config: ClassVar[str] = "configs/tasks/bimanual_insertion.yaml"
    env_id: ClassVar[str] = "app/StationaryAIBimanualInsertion-v0"
    reasons: ClassVar[tuple[str, ...]] = INSERT_REASONS
    object: str = "socket"
    peg: str = "peg"
    peg_length: float = 0.14  # [m] the peg's size along its x (checked against the scene's)
    socket_length: float = 0.08
    socket_bore: float = 0.025
    meet: tuple[float, float, float] = (0.0, 0.0, 0.14)
    gap: float = 0.03
    insert_depth: float = 0.03
    min_depth: float = 0.02
    insert_speed: float = 0.05
    lift_height: float = 0.08
    min_lift: float = 0.05
    grip_inset: float = 0.025  # [m] from each part's far end

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
        return [row for row in super().checks(at, ctx) if row[0] != at("object")] + [
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

    phases = InsertPhase
    after = {P.PRE_GRASP: P.DESCEND, P.DESCEND: P.CLOSE, P.LIFT: P.MEET, P.MEET: P.ALIGN, P.ALIGN: P.INSERT,
             P.INSERT: P.HOLD}

    def _grips(self, envs: np.ndarray, seen: list) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per arm: closing across its part ``grip_inset`` in from the part's end away from the other part (the
        hands then stay apart when the parts meet)."""
        out = []
        for k, o in enumerate(seen):
            R = quat_to_matrix(o.obj_quat[envs])
            along, centre, other = _level(R[:, :, 0]), o.obj_pos[envs], seen[1 - k].obj_pos[envs]
            away = -np.sign(np.einsum("ki,ki->k", other - centre, along))
            reach = self.halves[k][0] - self.task.grip_inset
            out.append((centre + along * (np.where(away == 0, 1.0, away) * reach)[:, None],
                        self._down(k, envs, o, _level(R[:, :, 1]))))
        return out

    def _step(self, envs: np.ndarray, t: float, seen: list, phase) -> None:
        if not len(envs) or phase not in (P.MEET, P.ALIGN, P.INSERT):
            super()._step(envs, t, seen, phase)
            return
        if phase == P.MEET:
            self._meet(envs, t, seen)
        else:
            self._line_up(envs, t, seen, inside=phase == P.INSERT)
        self.phase[envs] = phase

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

    def _line_up(self, envs: np.ndarray, t: float, seen: list, inside: bool) -> None:
        """The peg's hand moves the peg onto the socket's axis as both are now: ``gap`` short of its mouth, or
        (``inside``) ``insert_depth`` in, at ``insert_speed``."""
        task, (socket, peg) = self.task, seen
        axis = quat_to_matrix(socket.obj_quat[envs])[:, :, 0]
        axis *= np.sign(np.einsum("ki,ki->k", axis, peg.obj_pos[envs] - socket.obj_pos[envs]))[:, None]
        reach = task.socket_length / 2 + task.peg_length / 2 + (-task.insert_depth if inside else task.gap)
        goal = socket.obj_pos[envs] + axis * reach
        seg = self.segs[1]
        if inside:
            seg.bounds = (task.insert_speed, task.accel, task.angular_speed)
        seg.move_to(envs, t, peg.ee_pos[envs] + goal - peg.obj_pos[envs], seg.R1[envs])
        seg.bounds = (task.speed, task.accel, task.angular_speed)
        self.segs[0].hold(envs, t)
