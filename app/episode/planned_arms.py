"""Planned moves of a hand-over's two arms (app.tasks.planned_handover's ``mover``): the moving arms' goal poses
turned into joints by IK from where the arms are (else every closed-form branch), one plan over the moving arms'
DOFs (the other arm held) against the table, the boxes, the other arm (the sphere model's arm pairs; pairs within
one arm are not checked) and the object held by the carrying arm, timed, and one end-effector track per moving arm
from the same timed joints (the arms move together)."""

from __future__ import annotations

import logging

import numpy as np

from app.collision import CollisionModel
from app.control.planner_config import PlannerConfig
from app.episode.planned_moves import SceneMover, carrier_link, plan_options, timed_tracks
from app.kinematics.rotations import matrix_to_quat
from app.planning import PoseGoal
from app.planning.clearance import path_clearance
from app.planning.planner import path_check
from app.tasks.handover_expert import GIVER, TAKER
from app.tasks.planned_handover import ArmsMove, ArmsMoveRequest

log = logging.getLogger(__name__)


class ArmsSceneMover(SceneMover):
    """:class:`SceneMover` for the arms ``arms`` (names, GIVER then TAKER) of the scene robot ``robot``, with end
    effectors ``links``; the other arguments as SceneMover's."""

    def __init__(self, robot, arms: tuple[str, str], links: tuple[str, str], boxes: tuple[str, ...],
                 settings: PlannerConfig, run_seed: int, envs: np.ndarray, obj_half: np.ndarray):
        super().__init__(robot, links[GIVER], boxes, settings, run_seed, envs, obj_half)
        self.links = tuple(links)
        kinds = self.collision.pair_kinds  # the arms against each other and the world; within an arm, none (the
        # spheres of a level wrist overlap by tenths of a mm where the links do not touch)
        self.self_pairs = [p for p, kind in zip(self.collision.pair_names, kinds) if kind == "arms"]
        self.collision = CollisionModel(self.model, self.spheres, self.world, self.self_pairs)
        self.carriers = tuple(carrier_link(self.model, robot.grippers[a].links) for a in arms)
        m = self.model
        self.chains = tuple(np.array([d for d in range(m.n_dofs) if m.revolute[d]
                                      and m.link_index(link) in m.links_moved_by(d)], dtype=np.int64)
                            for link in links)

    def __call__(self, request: ArmsMoveRequest) -> list[ArmsMove]:
        return [self._arms(request, k, int(e)) for k, e in enumerate(request.envs)]

    def _goal(self, request: ArmsMoveRequest, k: int, q0: np.ndarray) -> np.ndarray | None:
        """The joints (n_dofs,) with each moving arm at its goal pose (IK from q0, its chain only; the arm stays
        on its branch), None where an arm's IK does not converge."""
        goal = q0.copy()
        for j, arm in enumerate(request.arms):
            pos, quat = self.base.targets_to_base(request.goal_pos[j, k][None],
                                                  matrix_to_quat(request.goal_rot[j, k])[None])
            info = self.model.inverse_kinematics(self.links[arm], pos[0], quat[0], init_qpos=q0, return_info=True)
            if not bool(np.all(info.converged)):
                return None
            goal[self.chains[arm]] = np.asarray(info.q, dtype=float).reshape(-1)[self.chains[arm]]
        return goal

    def _pose_goals(self, request: ArmsMoveRequest, k: int) -> list[PoseGoal]:
        """The moving arms' goal poses (base frame), for app.planning's goal sets (every branch, combined)."""
        goals = []
        for j, arm in enumerate(request.arms):
            pos, quat = self.base.targets_to_base(request.goal_pos[j, k][None],
                                                  matrix_to_quat(request.goal_rot[j, k])[None])
            goals.append(PoseGoal(self.links[arm], tuple(pos[0]), tuple(quat[0])))
        return goals

    def _arms(self, request: ArmsMoveRequest, k: int, e: int) -> ArmsMove:
        q0 = self.model.clip(np.asarray(request.q[k], dtype=float))
        seed = self.seed(e, request.move)
        holder = request.holder
        collision = self.collision if holder < 0 else self.held_world(self.carriers[holder], q0, request.obj_pos[k],
                                                                       request.obj_quat[k])
        goal = self._goal(request, k, q0)
        margins = collision.margins(self.settings.min_distance, self_margin=0.0)
        if goal is None or not collision.clear(goal[None], margins)[0]:  # every arm's closed-form branches instead
            goal = self._pose_goals(request, k)
        dofs = np.concatenate([self.chains[a] for a in request.arms])
        res = self._best(goal, q0, collision, seed, level=holder >= 0, dofs=dofs,
                         link=None if holder < 0 else self.links[holder])
        stats = {**self.stats(res, seed), "arms": [("giver", "taker")[a] for a in request.arms]}
        if not res.success:
            log.info("env %d: %s not planned: %s (%s)", self.envs[e], request.move, res.reason, res.detail)
            return ArmsMove(None, stats["reason"], stats)
        valid = path_check(self.model, collision, plan_options(self.settings, seed))
        tracks = timed_tracks(self.model, self.base, [self.links[a] for a in request.arms], res.path, self.settings,
                              valid)
        stats |= {"duration_s": round(tracks[0].duration, 4), **path_clearance(collision, tracks[0].q)}
        return ArmsMove(tracks, "", stats)


__all__ = ["GIVER", "TAKER", "ArmsSceneMover"]
