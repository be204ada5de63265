"""The run's motion for its environments (time-only, script, planned, or an object task's expert), with the
objects' start poses drawn from the seed: what an expert needs of the scene (the object's geometry, the grippers'
axes and openings, the arms' reach, a planner's mover) handed to the task as one record, SceneFacts."""

from __future__ import annotations

import numpy as np

from app.config.schema import RunConfig
from app.control.plan_motion import PlanMotion
from app.episode.plan_task import plan_task
from app.episode.planned_arms import ArmsSceneMover
from app.episode.planned_moves import SceneMover
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import matrix_to_quat
from app.sim.robot import Robot
from app.tasks import object_task
from app.tasks.scene_facts import GripperFacts, SceneFacts


def run_motion(run: RunConfig, n_envs: int | None = None, envs: np.ndarray | None = None, robot: Robot | None = None):
    """The run's motion for ``n_envs`` environments (default: the run's), or for the environments ``envs`` of them
    (their draws sliced from those of all); an object task's expert needs the scene's robot."""
    n_envs = run.n_envs or 1 if n_envs is None else n_envs
    return make_motion(run, robot, n_envs, envs)


def _yaw_quat(yaw: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of rotations about the vertical by yaw (...,) [rad] -> (..., 4)."""
    z = np.zeros_like(yaw)
    return np.stack([np.cos(yaw / 2), z, z, np.sin(yaw / 2)], axis=-1)


def object_starts(run: RunConfig, n_envs: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every object's start pose in each of ``n_envs`` environments: name -> (pos (n_envs, 3) [m], quat
    (n_envs, 4) wxyz), drawn from ``pos_range``/``yaw_range`` by the generator seeded (seed, 1, k) for the
    k-th object (fixed where no range is given), so a worker's share slices the same draws."""
    out = {}
    for k, obj in enumerate(run.scene_config.objects):
        rng = np.random.default_rng([run.seed, 1, k])
        pos = np.tile(np.asarray(obj.pos, dtype=float), (n_envs, 1))
        if obj.pos_range is not None:
            lo, hi = np.asarray(obj.pos_range, dtype=float)
            pos = rng.uniform(lo, hi, (n_envs, 3))
        yaw = np.full(n_envs, obj.yaw) if obj.yaw_range is None else rng.uniform(*obj.yaw_range, n_envs)
        out[obj.name] = (pos, _yaw_quat(yaw))
    return out


def make_motion(run: RunConfig, robot: Robot | None, n_envs: int, envs: np.ndarray | None = None):
    """The run's motion for ``n_envs`` environments, or for the environments ``envs`` of them (draws sliced)."""
    task, base_pos = run.motion, np.array(run.scene_config.robot.base_pos)
    if isinstance(task, PlanMotion):  # planned before the episode, on the scene's robot
        return plan_task(run, robot, n_envs, envs)
    if object_task(task) is None:  # a motion driven by time makes its own target source
        return task.targets(n_envs, base_pos, run.seed, envs)
    starts, places = _drawn(run, n_envs, envs)
    return object_motion(run, robot, starts, places, envs)


def _drawn(run: RunConfig, n_envs: int, envs: np.ndarray | None) -> tuple[dict, np.ndarray]:
    """Every object's start (name -> (pos (k, 3) [m], quat (k, 4))) and the task's place targets (k, 2) [m]
    drawn for ``n_envs`` environments from the run's seed (those of ``envs`` where given)."""
    starts = object_starts(run, n_envs)
    places = run.motion.places(starts, run.seed)
    if envs is not None:
        idx = np.asarray(envs, dtype=int)
        starts, places = {name: (pos[idx], quat[idx]) for name, (pos, quat) in starts.items()}, places[idx]
    return starts, places


def object_motion(run: RunConfig, robot: Robot, starts: dict, places: np.ndarray, envs: np.ndarray | None = None):
    """The run's object task's expert for environments whose objects start at ``starts`` (name -> (pos (k, 3) [m],
    quat (k, 4))) and whose place targets are ``places`` (k, 2) [m] (environment frames). ``envs``: their indices
    in the whole run (None: 0..k-1), which seed a planned expert's moves."""
    return run.motion.expert(scene_facts(run, robot, starts, places, envs))


def scene_facts(run: RunConfig, robot: Robot, starts: dict, places: np.ndarray,
                envs: np.ndarray | None = None) -> SceneFacts:
    """What the run's object task's expert is told of the built scene (app.tasks.scene_facts)."""
    rs, task = run.scene_config.robot, run.motion
    obj = next(o for o in run.scene_config.objects if o.name == task.object)
    obj_pos = starts[task.object][0]
    envs = np.arange(len(obj_pos)) if envs is None else np.asarray(envs, dtype=int)
    boxes = tuple(b.name for b in (run.scene_config.table, *run.scene_config.obstacles) if b is not None)
    half = np.asarray(obj.half_extents(), dtype=float)
    grippers = {arm: GripperFacts(rs.arms[arm], g.approach_axis, g.closing_axis, robot.grippers[arm].max_opening)
                for arm, g in rs.grippers_by_arm.items() if arm and arm in (rs.arms or {})}
    if rs.gripper is not None:  # the one gripper, on the run's end effector: key ''
        grippers[""] = GripperFacts(rs.ee_link, rs.gripper.approach_axis, rs.gripper.closing_axis,
                                    robot.gripper.max_opening)

    def mover(planner, arms, links):
        if arms is None:
            return SceneMover(robot, links[0], boxes, planner, run.seed, envs, half)
        return ArmsSceneMover(robot, arms, links, boxes, planner, run.seed, envs, half)

    return SceneFacts(robot.model, BaseFrame(*robot.base_frames()), robot.arm_dofs, grippers, half,
                      obj.shape in ("cylinder", "sphere"), obj_pos, starts,
                      {o.name: np.asarray(o.half_extents(), dtype=float) for o in run.scene_config.objects},
                      places, envs, run.seed,
                      lambda: robot.sphere_model(boxes), lambda links: _reach(robot, links), mover)


def _reach(robot: Robot, links: list[str]):
    """``reach(arm, pos (k, 3), rot (k, 3, 3)) -> (k,)``: for environment-frame poses, the smallest distance of the
    arm's joints (those that move its end effector) from their limits in the pose IK's answer; -inf: not reached."""
    base, m = BaseFrame(*robot.base_frames()), robot.model
    chains = [np.flatnonzero(np.linalg.norm(m.get_jacobian(m.mid_config(), link), axis=0) > 0) for link in links]

    def reach(arm: int, pos: np.ndarray, rot: np.ndarray) -> np.ndarray:
        p, q = base.targets_to_base(pos, matrix_to_quat(rot))
        info = m.inverse_kinematics(links[arm], p, q, return_info=True, max_restarts=20)
        dofs = chains[arm]
        margin = np.minimum(info.q[..., dofs] - m.q_lower[dofs], m.q_upper[dofs] - info.q[..., dofs]).min(axis=-1)
        return np.where(np.atleast_1d(info.converged), np.atleast_1d(margin), -np.inf)

    return reach


