"""The ``plan`` task's target source for a run's environments: each environment's moves planned from the robot's
start through the task's goals (app.episode.planned_moves.SceneMover), joined with the dwell at each goal into one
end-effector track per environment (app.control.plan_motion.PlannedPath)."""

from __future__ import annotations

import numpy as np

from app.config.schema import RunConfig
from app.control.plan_motion import PlanGoal, PlannedPath
from app.control.tracks import Track
from app.episode.planned_moves import TRACK_RATE, SceneMover
from app.kinematics.rotations import quat_to_matrix
from app.planning import PoseGoal


def plan_task(run: RunConfig, robot, n_envs: int, envs: np.ndarray | None = None) -> PlannedPath:
    """Every environment's planned moves (``envs``: their indices in the whole run; None: 0..n_envs-1), from the
    robot's initial joints (robot.initial_qpos) against the scene's table and boxes."""
    task, link = run.motion, run.scene_config.robot.ee_link
    envs = np.arange(n_envs) if envs is None else np.asarray(envs, dtype=int)
    boxes = tuple(b.name for b in (run.scene_config.table, *run.scene_config.obstacles) if b is not None)
    mover = SceneMover(robot, link, boxes, task.planner, run.seed, envs)
    starts = np.asarray(robot.initial_qpos, dtype=float).reshape(-1, robot.model.n_dofs)
    tracks, moves, reasons = [], [], []
    for e in range(len(envs)):
        track, stats, reason = _environment(mover, e, starts[min(e, len(starts) - 1)], task.goals, task.dwell)
        tracks.append(track)
        moves.append(stats)
        reasons.append(reason)
    return PlannedPath(tracks, moves, reasons)


def _environment(mover: SceneMover, e: int, q0: np.ndarray, goals: tuple[PlanGoal, ...],
                 dwell: float) -> tuple[Track, list[dict], str]:
    """One environment's moves through ``goals`` from q0 (n_dofs,): its joined track, stats and failure reason."""
    q, pieces, stats = mover.model.clip(q0), [_rest(mover, q0, 0.0)], []
    for j, goal in enumerate(goals):
        planned = mover.plan_to(e, q, _goal(mover, goal, q), f"goal{j}")
        stats.append({"goal": j, **planned.stats})
        if planned.track is None:
            return _joined(pieces), stats, planned.reason
        q = planned.track.q[-1]
        pieces += [planned.track, _rest(mover, q, dwell)]
    return _joined(pieces), stats, ""


def _goal(mover: SceneMover, goal: PlanGoal, q: np.ndarray):
    """A joint goal (n_dofs,) (the DOFs not planned kept as in q), or the pose as a base-frame PoseGoal."""
    model = mover.model
    if goal.joints is not None:
        joints = np.asarray(goal.joints, dtype=float)
        out = q.copy()
        if len(joints) == model.n_dofs:
            out[model.revolute] = joints[model.revolute]
        else:
            out[model.revolute] = joints
        return out
    pos, quat = mover.base.targets_to_base(np.asarray(goal.pos, dtype=float)[None],
                                           np.asarray(goal.quat, dtype=float)[None])
    return PoseGoal(mover.link, tuple(pos[0]), tuple(quat[0] / np.linalg.norm(quat[0])), tuple(goal.pos_mask),
                    tuple(goal.rot_mask))


def _rest(mover: SceneMover, q: np.ndarray, seconds: float) -> Track:
    """The end effector at rest at joints q for ``seconds`` (one sample at least)."""
    k = max(1, round(seconds * TRACK_RATE))
    one = _fk_track(mover, q[None])
    return Track(np.repeat(one.pos, k, 0), np.repeat(one.rot, k, 0), np.zeros((k, 3)), np.repeat(q[None], k, 0),
                 TRACK_RATE)


def _fk_track(mover: SceneMover, q: np.ndarray) -> Track:
    """The end effector's poses at joints q (K, n_dofs), at rest."""
    pos_b, quat_b = mover.model.forward_kinematics(q, [mover.link])
    pos, quat = mover.base.poses_from_base(pos_b[:, 0], quat_b[:, 0])
    return Track(pos, quat_to_matrix(quat), np.zeros_like(pos), q, TRACK_RATE)


def _joined(pieces: list[Track]) -> Track:
    """Tracks one after another (each starts where the one before ends) as one track."""
    return Track(*(np.concatenate([getattr(p, f) for p in pieces]) for f in ("pos", "rot", "vel", "q")), TRACK_RATE)
