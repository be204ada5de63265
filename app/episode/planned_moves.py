"""Planned moves for a run's motions: a goal pose (or joints) in an environment's frame -> app.planning's
collision-free path against the scene's table and boxes (and the held object while carrying), timed by Ruckig
and turned into an end-effector :class:`~app.control.tracks.Track` the controllers follow.

The planner is seeded per move from (run seed, settings seed, the environment's index in the whole run, the
move, how many moves that environment planned before): a move's plan depends on its problem and that seed alone,
not on the process or the block of environments that plans it, and a run repeats run after run (a pick split over
workers still starts its later moves from slightly other simulated states: docs/planning.md, Repeatability).
"""

from __future__ import annotations

import itertools
import logging
import zlib

import numpy as np

from app.collision import CollisionModel, HeldObject, robot_spheres
from app.control.planner_config import PlannerConfig
from app.control.tracks import Track
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix, so3_exp, so3_log
from app.planning import PlanOptions, PoseGoal, plan, time_parameterize
from app.planning.clearance import path_clearance
from app.planning.planner import path_check
from app.sim.sphere_world import scene_world
from app.tasks.planned_pick import MoveRequest, PlannedMove

log = logging.getLogger(__name__)

TRACK_RATE = 240.0  # [Hz] the tracks' samples (the controllers read them between samples, interpolated)


def plan_options(settings: PlannerConfig, seed: int, min_distance: float | None = None) -> PlanOptions:
    """app.planning's options for one search of ``settings`` seeded ``seed`` (``min_distance`` [m]: instead of
    the settings')."""
    clearance = settings.min_distance if min_distance is None else min_distance
    return PlanOptions(planner=settings.planner, timeout=settings.timeout, resolution=settings.resolution,
                       min_distance=clearance, self_min_distance=0.0, shortcut_attempts=settings.shortcut_attempts,
                       max_goals=settings.max_goals, seed=int(seed))


def move_seed(run_seed: int, settings: PlannerConfig, env: int, move: str, nth: int) -> int:
    """The seed of environment ``env``'s ``nth`` planned move ``move`` (a 31-bit integer)."""
    key = [int(run_seed) % 2**32, int(settings.seed) % 2**32, int(env), zlib.crc32(move.encode()), int(nth)]
    return int(np.random.SeedSequence(key).generate_state(1)[0] % (2**31 - 2))


def timed_tracks(model, base: BaseFrame, links: list[str], path: np.ndarray, settings: PlannerConfig,
                 valid=None) -> list[Track]:
    """The full-DOF path (N, n_dofs) timed within ``settings``' bounds and sampled at TRACK_RATE, as each of
    ``links``' poses in the environment's frame (velocity by central differences) with the joints; ``valid``
    (app.planning.planner.path_check of the plan): its corners passed where that check allows."""
    traj = time_parameterize(path, model.v_max * settings.velocity_scale, settings.acceleration, settings.jerk,
                             TRACK_RATE, valid=valid)
    pos_b, quat_b = model.forward_kinematics(traj.q, list(links))
    tracks = []
    for i in range(len(links)):
        pos, quat = base.poses_from_base(pos_b[:, i], quat_b[:, i])
        vel = np.gradient(pos, 1.0 / TRACK_RATE, axis=0) if len(pos) > 1 else np.zeros_like(pos)
        vel[-1] = 0.0
        tracks.append(Track(pos, quat_to_matrix(quat), vel, traj.q, TRACK_RATE))
    return tracks


def carrier_link(model, finger_links) -> str:
    """The link that carries a gripper's fingers (the parent of its finger links outside them)."""
    parent, fingers = model.fk_tables.parent, {int(i) for i in finger_links}
    return model.link_names[min({int(parent[i]) for i in fingers} - fingers)]


def tilt(model, link: str, path: np.ndarray, step: float = 0.05) -> float:
    """The largest angle [rad] between ``link``'s orientation along the path (N, n_dofs) (edges sampled every
    ``step`` [rad] per DOF) and the steady turn from its start orientation to its end one (the geodesic, at the
    same fraction of the path's joint-space length): 0 for a path that turns the link as a straight segment would;
    for equal ends, its largest angle from the start orientation."""
    edges = [a + np.linspace(0.0, 1.0, max(2, int(np.ceil(np.abs(b - a).max() / step)) + 1))[:, None] * (b - a)
             for a, b in itertools.pairwise(path)]
    q = np.concatenate(edges) if edges else path
    R, _ = model.link_frames(q)
    R = R[:, model.link_index(link)]
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(q, axis=0), axis=1))])
    frac = arc / arc[-1] if arc[-1] > 0 else np.zeros_like(arc)
    R_ref = R[0] @ so3_exp(frac[:, None] * so3_log(R[0].T @ R[-1])[None])
    cos = (np.einsum("kij,kij->k", R, R_ref) - 1.0) / 2.0  # trace(R_ref^T R) = sum of the elementwise product
    return float(np.arccos(np.clip(cos, -1.0, 1.0)).max())


class SceneMover:
    """The ``mover`` of a planned pick-and-place (app.tasks.planned_pick.Mover) on the scene robot ``robot``.

    Args:
        robot: the scene's Robot (app.sim.robot) after the build; its model, base frame, boxes and gripper.
        link: the end effector planned for; boxes: the scene boxes avoided (table, obstacles).
        settings: the task's planner section; run_seed: the run's seed.
        envs: the whole run's index of each environment this motion drives (k,) (a worker's share).
        obj_half: (3,) [m] the task object's half extents (held while carrying); None: no object.
    """

    def __init__(self, robot, link: str, boxes: tuple[str, ...], settings: PlannerConfig, run_seed: int,
                 envs: np.ndarray, obj_half: np.ndarray | None = None):
        self.model, self.link, self.settings, self.run_seed = robot.model, link, settings, int(run_seed)
        self.base, self.envs = BaseFrame(*robot.base_frames()), np.asarray(envs, dtype=int)
        self.spheres = robot_spheres(robot.urdf, robot.package_dirs, text=robot.description_text)
        self.world = scene_world(robot, boxes)
        self.self_pairs: list[tuple[str, str]] | None = None  # the robot's pairs checked (None: the sampled ones)
        self.collision = CollisionModel(self.model, self.spheres, self.world)
        self.obj_half = None if obj_half is None else tuple(float(v) for v in obj_half)
        fingers = [int(i) for g in robot.grippers.values() for i in g.links]
        self.carrier = carrier_link(self.model, fingers) if fingers else link
        self.count = np.zeros(len(self.envs), dtype=int)

    def __call__(self, request: MoveRequest) -> list[PlannedMove]:
        return [self._one(request, k, int(e)) for k, e in enumerate(request.envs)]

    def _world(self, request: MoveRequest, k: int, q0: np.ndarray) -> CollisionModel:
        """The scene's boxes, with the object held in the carrier link's frame while carrying."""
        if request.move != "carry" or self.obj_half is None:
            return self.collision
        return self.held_world(self.carrier, q0, request.obj_pos[k], request.obj_quat[k])

    def held_world(self, carrier: str, q0: np.ndarray, obj_pos: np.ndarray, obj_quat: np.ndarray) -> CollisionModel:
        """The scene's boxes with the object (at obj_pos (3,), obj_quat (4,) in the environment's frame) held in
        ``carrier``'s frame at joints q0 (n_dofs,)."""
        p_obj, q_obj = self.base.targets_to_base(obj_pos[None], obj_quat[None])
        R_l, p_l = self.model.link_frames(q0[None])
        li = self.model.link_index(carrier)
        R, p = R_l[0, li], p_l[0, li]
        held = HeldObject("held", carrier, self.obj_half, tuple(R.T @ (p_obj[0] - p)),
                          tuple(matrix_to_quat(R.T @ quat_to_matrix(q_obj[0]))))
        return CollisionModel(self.model, self.spheres, self.world._replace(held=held), self.self_pairs)

    def _goal(self, request: MoveRequest, k: int, q0: np.ndarray):
        """The goal as joints: of the IK solutions from the request's hint (the grasp ranking's branch) and from the
        start, the nearer to the start; where neither converges, the pose itself (every closed-form branch,
        nearest first)."""
        pos, quat = self.base.targets_to_base(request.goal_pos[k][None], matrix_to_quat(request.goal_rot[k])[None])
        seeds = [q0] + ([] if request.q_hint is None else [self.model.clip(np.asarray(request.q_hint[k], float))])
        found = []
        for seed in seeds:
            info = self.model.inverse_kinematics(self.link, pos[0], quat[0], init_qpos=seed, return_info=True,
                                                 max_restarts=0)
            if bool(np.all(info.converged)):
                q = np.asarray(info.q, dtype=float).reshape(-1).copy()
                q[~self.model.revolute] = q0[~self.model.revolute]
                found.append(q)
        if not found:
            return PoseGoal(self.link, tuple(pos[0]), tuple(quat[0]))
        return min(found, key=lambda q: float(np.linalg.norm(q - q0)))

    def _best(self, goal, q0: np.ndarray, collision: CollisionModel, seed: int, level: bool = False,
              dofs: np.ndarray | None = None, link: str | None = None, min_distance: float | None = None):
        """The best of ``settings.searches`` plans (seeds seed, seed + 1, ...): the shortest, or with ``level`` the
        one whose end effector turns least away from a steady turn between its end orientations (:func:`tilt`; a
        held object pivots in the fingers where the gripper tilts), its ``seconds`` the time of them all; the
        first failure where none succeeds. ``dofs``: the planned DOFs (None: every revolute one); ``link``: the one
        whose turning counts (None: the mover's); ``min_distance``: instead of the settings'."""
        results = []
        for i in range(self.settings.searches):
            res = plan(self.model, goal, q0, collision=collision, dofs_idx_local=dofs,
                       options=plan_options(self.settings, seed + i, min_distance))
            results.append(res)
            if res.reason in ("start_in_collision", "goal_in_collision", "no_ik_goal"):
                break  # the same for every seed
        found = [r for r in results if r.success]
        turning = self.link if link is None else link
        cost = (lambda r: tilt(self.model, turning, r.path) + 0.05 * r.length) if level else (lambda r: r.length)
        best = min(found, key=cost) if found else results[0]
        return best._replace(seconds=sum(r.seconds for r in results))

    def _one(self, request: MoveRequest, k: int, e: int) -> PlannedMove:
        """Environment e's (local index) move of ``request``: planned, timed and turned into a track, or its
        failure."""
        q0 = self.model.clip(np.asarray(request.q[k], dtype=float))
        return self.plan_to(e, q0, self._goal(request, k, q0), request.move, self._world(request, k, q0))

    def _clearance(self, move: str, q0: np.ndarray, collision: CollisionModel) -> float | None:
        """A retreat starts with the fingers beside the table and the object: it keeps the smaller of min_distance
        and 90 % of the start's clearance from the world (None: the settings' for every other move)."""
        if move != "retreat":
            return None
        d, _ = collision.distances(q0[None], with_gradient=False)
        world = d[0, np.array(collision.pair_kinds) == "world"]
        return float(np.clip(0.9 * world.min(), 0.0, self.settings.min_distance)) if len(world) else None

    def seed(self, e: int, move: str) -> int:
        """Environment e's (local index) next move's seed (move_seed with its index in the whole run)."""
        self.count[e] += 1
        return move_seed(self.run_seed, self.settings, int(self.envs[e]), move, int(self.count[e]) - 1)

    def stats(self, res, seed: int) -> dict:
        """A plan's figures for the report; on failure the reason as the episode gives it (``plan_timeout`` for
        the planner's ``timeout``) and the planner's sentence."""
        stats = {"planner": self.settings.planner, "success": bool(res.success), "reason": res.reason,
                 "planning_s": round(res.seconds, 4), "path_length_rad": round(res.length, 6),
                 "raw_length_rad": round(res.raw_length, 6), "waypoints": len(res.path), "seed": seed}
        if not res.success:
            stats |= {"reason": "plan_timeout" if res.reason == "timeout" else res.reason, "detail": res.detail}
        return stats

    def plan_to(self, e: int, q0: np.ndarray, goal, move: str, collision: CollisionModel | None = None) -> PlannedMove:
        """Environment e (local index) from joints q0 (n_dofs,) to ``goal`` (joints (n_dofs,) or a base-frame
        PoseGoal) against ``collision`` (None: the scene's boxes): the best of the settings' searches, timed and
        turned into a track, or the reason it failed (app.control.phases.PLAN_REASONS)."""
        seed = self.seed(e, move)
        collision = self.collision if collision is None else collision
        clearance = self._clearance(move, q0, collision)
        res = self._best(goal, q0, collision, seed, level=move == "carry", min_distance=clearance)
        stats = self.stats(res, seed)
        if not res.success:
            log.info("env %d: %s not planned: %s (%s)", self.envs[e], move, res.reason, res.detail)
            return PlannedMove(None, stats["reason"], stats)
        valid = path_check(self.model, collision, plan_options(self.settings, seed, clearance))
        (track,) = timed_tracks(self.model, self.base, [self.link], res.path, self.settings, valid)
        stats |= {"duration_s": round(track.duration, 4), **path_clearance(collision, track.q)}
        return PlannedMove(track, "", stats)
