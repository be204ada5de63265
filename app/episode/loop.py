"""One episode, as the seed's example loop reads: per physics step targets -> solve -> command -> step -> record,
and the episode's end (final state, telemetry, a feedback motion's results)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from app.config.schema import RunConfig
from app.control.motion_protocol import Motion
from app.control.status import latest_status
from app.control.telemetry import InvariantMonitor
from app.episode.arms_feedback import ArmsFeedback
from app.episode.feedback import Feedback
from app.episode.frame_state import FrameState
from app.episode.motion_factory import object_starts
from app.episode.run_report import task_links
from app.ik.branches import labeller
from app.ik.limits.distance import GraspState
from app.kinematics.arms import cross_arm_pairs
from app.quality.limits import samples_every
from app.quality.trace import MotionTrace, TraceOptions
from app.render.progress import Progress
from app.sim.robot import Robot
from app.sim.scene import Scene
from app.sim.sphere_world import SPHERE_SHAPES
from app.tasks import TaskJudge, judged, object_task


@dataclass
class RunResult:
    """What a run produced: final state, telemetry, output paths and timings [s]."""

    q_final: np.ndarray
    ee_pos: np.ndarray
    ee_quat: np.ndarray
    targets_pos: np.ndarray
    targets_quat: np.ndarray
    telemetry: dict
    invariants: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    scale: dict = field(default_factory=dict)  # a sharded run's workers, blocks and pace (app.episode.sharding)
    episodes: list = field(default_factory=list)  # pick-and-place: one result per environment (PickLog.results)
    plans: list = field(default_factory=list)  # a plan task: one result per environment (PlannedPath.outcomes)
    objects: dict = field(default_factory=dict)  # name -> start_pos, start_quat, final_pos, final_quat (n_envs, .)
    simulated_s: float | None = None  # simulated time at the end [s] (less than the run's duration: stopped early)
    motion: list = field(default_factory=list)  # per environment its motion-quality report (app.quality)


@dataclass
class Episode:
    """The parts of one episode the loop ticks: the controller, the grippers' feedback (None without a gripper),
    the invariants watched every physics step and the motion sampled (app.quality.trace); ``every``: physics steps
    per control tick."""

    controller: object
    feedback: Feedback | ArmsFeedback | None
    invariants: InvariantMonitor
    every: int
    motion: MotionTrace  # the arm joints sampled for the motion-quality report, every ``motion_every`` steps
    motion_every: int


def make_controller(run: RunConfig, robot: Robot, dt: float):
    """The configured controller (the class paired with the config's type) ticking every ``dt`` seconds."""
    boxes = tuple(b.name for b in (run.scene_config.table, *run.scene_config.obstacles) if b is not None)
    objects = tuple(o.name for o in run.scene_config.objects)  # objects are watched as obstacles too
    config, arms = run.controller, run.scene_config.robot.arms or {}
    if config.keeps_arms_apart and len(arms) >= 2:  # the arms kept apart as the obstacles are
        pairs = tuple(p for p in cross_arm_pairs(robot.model, list(arms.values()))
                      if p[0] in robot.collision_links and p[1] in robot.collision_links)
        config = dataclasses.replace(config, self_pairs=config.self_pairs + pairs)
    if config.rows_from_spheres:  # boxes, primitive objects, self pairs
        fitted = tuple(o.name for o in run.scene_config.objects if o.shape in SPHERE_SHAPES)
        collision = robot.sphere_model(boxes, config.self_pairs, fitted)
        files = tuple(name for name in objects if name not in fitted)  # mesh and URDF objects: PyBullet's points
        return config.controller_cls.from_config(robot, config, run.motion, task_links(run), dt, files, run.seed,
                                                 collision=collision)
    return config.controller_cls.from_config(robot, config, run.motion, task_links(run), dt, boxes + objects,
                                             run.seed)


def make_feedback(run: RunConfig, scene: Scene, robot: Robot, motion: Motion) -> Feedback | ArmsFeedback | None:
    """What each control tick observes and commands of the grippers: the arms of a motion that works several
    (ArmsFeedback), one gripper (Feedback), or nothing without a gripper."""
    if motion.arms:
        feedback = ArmsFeedback(scene, robot, motion, run.scene_config.robot.arms)
    elif robot.gripper is not None:
        feedback = Feedback(scene, robot, motion, run.scene_config.robot.ee_link)
    else:
        return None
    task = object_task(run.motion)
    if task is not None and motion.feedback:  # the task's own judgement, fed what its expert observes
        feedback.judge = TaskJudge(task, robot.n_envs)
        feedback.judge.reset(np.arange(robot.n_envs), scene.objects[task.object].poses()[0], motion.place[:, :2])
    return feedback


def make_episode(run: RunConfig, scene: Scene, robot: Robot, motion: Motion,
                 motion_keep_s: float | None = None) -> Episode:
    """The controller, feedback, invariant monitor and motion trace of an episode of ``run`` in the built
    ``scene``; ``motion_keep_s``: the trace judges only the last this many seconds (None: the whole run)."""
    physics_hz = run.scene_config.physics_hz
    every = max(1, int(round(physics_hz / (run.controller.control_hz or physics_hz))))
    m = robot.model
    sample_every = every * samples_every(physics_hz / every)
    trace = MotionTrace.of_robot(robot, sample_every / physics_hz, run.controller.accel_max, TraceOptions(
        command_branches(run, robot), run.controller.mode != "kinematic", motion_keep_s))
    trace.reset(range(robot.n_envs), *robot.read_states())
    return Episode(make_controller(run, robot, every / physics_hz), make_feedback(run, scene, robot, motion),
                   InvariantMonitor(m.q_lower, m.q_upper, m.v_max, robot.n_envs), every, trace, sample_every)


def command_branches(run: RunConfig, robot: Robot):
    """The IK branch of each environment's command (app.ik.branches.labeller) where the task moves one link of an
    arm with a closed form; None otherwise (two arms, another family)."""
    links = task_links(run)
    return labeller(robot.model, links[0]) if len(links) == 1 else None


def simulate(run: RunConfig, scene: Scene, robot: Robot, motion: Motion, recorder=None, on_tick=None,
             target_hook=None, n_steps: int | None = None, show_progress: bool = True,
             episode: Episode | None = None) -> tuple[Episode, dict]:
    """The control loop, ``n_steps`` physics steps (default: the run's duration); returns (episode, timings [s]).

    ``recorder(FrameState)`` receives the state of each video frame; ``on_tick(k, controller, q)`` runs after
    each physics step with the measured joints q (n_envs, n_dofs) (the GUI paces, pauses and draws there; it
    returns True to stop); ``target_hook(t, targets)`` may change the targets (the GUI's sliders); ``episode``:
    made by :func:`make_episode` where not given. Target frames are drawn in the scene only where someone looks
    (GUI).
    """
    physics_hz = run.scene_config.physics_hz
    episode = make_episode(run, scene, robot, motion) if episode is None else episode
    controller, feedback, every = episode.controller, episode.feedback, episode.every
    first = motion(0.0)
    with scene.rendering_paused():
        markers = [scene.draw_debug_frame(first.pos[:, k], quat=first.quat[:, k], axis_length=0.08)
                   for k in range(motion.n_targets)] if scene.gui else []
    n_steps = int(round(run.duration * physics_hz)) if n_steps is None else n_steps
    frame_every, n_frames = physics_hz / run.video.fps, 0
    timings = dict(control=0.0, physics=0.0, record=0.0)
    progress = Progress("simulating", n_steps, unit="step") if show_progress else None
    grasp = GraspState.nothing(robot.n_envs)
    q = robot.read_states()[0]  # the first tick's measured joints
    try:
        for k in range(n_steps):
            t = k / physics_hz
            t0 = time.perf_counter()
            tick, frame_due = k % every == 0, recorder is not None and k >= n_frames * frame_every - 1e-9
            if feedback is not None and tick:
                grasp = feedback.tick(t, q, every / physics_hz)
            if tick or frame_due or markers or target_hook is not None:  # targets only where they are used
                tg = motion(t) if target_hook is None else target_hook(t, motion(t))
            if tick:
                controller.track(t, tg, grasp)
            t1 = time.perf_counter()
            for i, marker in enumerate(markers):
                marker.set_pose(tg.pos[:, i], tg.quat[:, i])
            scene.update_debug_objects()
            scene.step()
            q, v = robot.read_states()
            episode.invariants.update(q, v)
            if (k + 1) % episode.motion_every == 0:
                episode.motion.record(q, v, robot.last_command)
            t2 = time.perf_counter()
            if frame_due:
                poses = scene.object_poses()
                recorder(FrameState(scene.t, q, tg.pos, tg.quat, latest_status(controller.telemetry, robot.n_envs),
                                    poses, motion.codes(), motion.marks,
                                    feedback.opening[-1] if feedback is not None and feedback.opening else None,
                                    _finger_goals(robot), motion.paths, episode.motion.watch_live().take(),
                                    _verdict(feedback)))
                n_frames += 1
            timings["control"] += t1 - t0
            timings["physics"] += t2 - t1
            timings["record"] += time.perf_counter() - t2
            if on_tick is not None and on_tick(k, controller, q):
                break
            if progress and k % 20 == 0:
                progress.update(k)
        if progress:
            progress.update(n_steps)
    finally:
        if progress:
            progress.close()
    return episode, timings


def _verdict(feedback) -> np.ndarray | None:
    """(n_envs,) str: the task's judgement at the last tick ("success" or its reason); None without a judge."""
    judge = None if feedback is None else feedback.judge
    if judge is None or judge.last is None:
        return None
    return np.array(["success" if ok else why for ok, why in zip(judge.last.success, judge.last.reason)])


def _finger_goals(robot: Robot) -> np.ndarray | None:
    """(n_envs, n_grippers) [m]: each gripper's commanded finger position; None without a gripper."""
    return np.stack([g.finger_goal() for g in robot.grippers.values()], axis=1) if robot.grippers else None


def final_state(run: RunConfig, robot: Robot, episode: Episode, motion: Motion, t: float, q: np.ndarray | None = None,
                scene: Scene | None = None, envs: np.ndarray | None = None, targets=None) -> RunResult:
    """The run's end at time t [s]: joints q (n_envs, n_dofs) (read from the robot unless given), link poses
    by FK, the targets (``targets(t)``, default the motion's), telemetry and invariants; with the ``scene`` (of
    the environments ``envs``), its objects' start and final poses and a feedback motion's results."""
    result = _final_robot(run, robot, episode, motion if targets is None else targets, t, q)
    result.simulated_s = float(t)
    if scene is not None and scene.objects:
        idx = slice(None) if envs is None else np.asarray(envs, dtype=int)
        starts = object_starts(run, run.n_envs or 1)
        result.objects = {}
        for name, obj in scene.objects.items():
            pos, quat = obj.poses()
            result.objects[name] = {"start_pos": starts[name][0][idx], "start_quat_wxyz": starts[name][1][idx],
                                    "final_pos": pos, "final_quat_wxyz": quat}
    feedback = episode.feedback
    if feedback is not None:
        result.telemetry.update(feedback.telemetry())
    if feedback is not None and motion.feedback:
        seen = feedback.observe(robot.read_states()[0])
        result.episodes = motion.finish(seen)
        if feedback.judge is not None:
            judged(result.episodes, feedback.judge.update(seen if isinstance(seen, dict) else {"": seen},
                                                          feedback.scene.objects, motion.place))
    elif not motion.feedback:
        result.plans = motion.outcomes() or []
    return result


def _final_robot(run: RunConfig, robot: Robot, episode: Episode, targets, t: float, q: np.ndarray | None) -> RunResult:
    q = robot.read_states()[0] if q is None else q
    links = task_links(run)
    pos, quat = robot.forward_kinematics(robot.unbatch(q), links_idx_local=[robot.model.link_index(l) for l in links])
    tg = targets(t)
    n, inv = robot.n_envs, episode.invariants
    invariants = {"limit_excess": inv.limit_excess, "velocity_ratio": inv.velocity_ratio,
                  "stop_hits": robot.stops.hits.copy()}
    return RunResult(q, pos.reshape(n, len(links), 3), quat.reshape(n, len(links), 4), tg.pos, tg.quat,
                     episode.controller.telemetry.arrays(), invariants, motion=episode.motion.reports())
