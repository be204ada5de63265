"""One run, as the seed's example loop reads: build the scene, then per tick targets -> solve ->
command -> step -> record; then write the video, the report and the plot."""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.config.schema import RunConfig
from app.control.motions import TargetGenerator  # or any motion of app.episode.feedback.make_motion
from app.control.telemetry import InvariantMonitor
from app.kinematics.arms import cross_arm_pairs
from app.control.status import latest_status
from app.runtime.outputs import OutputSet
from app.render.progress import Progress
from app.render.report import plot_tracking, write_json_atomic
from app.episode.run_report import report_dict, task_links
from app.episode.scene_build import build_scene
from app.control.handover import HandoverMotion
from app.episode.feedback import Feedback, make_motion, object_starts
from app.episode.arms_feedback import ArmsFeedback, make_handover
from app.sim.robot import Robot
from app.sim.scene import Scene
from app.sim.sphere_world import SPHERE_SHAPES
from app.episode.video_job import FrameState, VideoJob, auto_workers, video_spec, video_view

log = logging.getLogger(__name__)


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
    objects: dict = field(default_factory=dict)  # name -> start_pos, start_quat, final_pos, final_quat (n_envs, .)


def run_targets(run: RunConfig, n_envs: int | None = None, envs: np.ndarray | None = None, robot: Robot | None = None):
    """The run's motion (app.episode.feedback.make_motion) for ``n_envs`` environments (default: the run's), or for the
    environments ``envs`` of them (their draws sliced from those of all); a pick-and-place needs the robot."""
    n_envs = run.n_envs or 1 if n_envs is None else n_envs
    if isinstance(run.task, HandoverMotion):
        return make_handover(run, robot, n_envs, envs)
    return make_motion(run, robot, n_envs, envs)


def object_poses(scene: Scene) -> np.ndarray | None:
    """Every object's pose in each environment's frame (n_envs, n_objects, 7): position, quat wxyz; None: none."""
    if not scene.objects:
        return None
    return np.stack([np.concatenate(obj.poses(), axis=1) for obj in scene.objects.values()], axis=1)


def abandon(outputs: OutputSet, job: VideoJob | None) -> None:
    """A run failed or was interrupted: render processes stopped, no output written or replaced."""
    if job is not None:
        job.abort()
    outputs.discard()


def make_controller(run: RunConfig, robot: Robot, dt: float):
    """The configured controller (the class paired with the config's type) ticking every ``dt`` seconds."""
    boxes = tuple(b.name for b in (run.scene_config.table, *run.scene_config.obstacles) if b is not None)
    objects = tuple(o.name for o in run.scene_config.objects)  # objects are watched as obstacles too
    config, arms = run.controller, run.scene_config.robot.arms or {}
    if getattr(config, "arm_pairs", False) and len(arms) >= 2:  # the arms kept apart as the obstacles are
        pairs = tuple(p for p in cross_arm_pairs(robot.model, list(arms.values()))
                      if p[0] in robot.collision_links and p[1] in robot.collision_links)
        config = dataclasses.replace(config, self_pairs=config.self_pairs + pairs)
    if getattr(config, "collision_model", "pybullet") == "spheres":  # boxes, primitive objects, self pairs
        fitted = tuple(o.name for o in run.scene_config.objects if o.shape in SPHERE_SHAPES)
        collision = robot.sphere_model(boxes, config.self_pairs, fitted)
        files = tuple(name for name in objects if name not in fitted)  # mesh and URDF objects: PyBullet's points
        return config.controller_cls.from_config(robot, config, run.task, task_links(run), dt, files, run.seed,
                                                 collision=collision)
    return config.controller_cls.from_config(robot, config, run.task, task_links(run), dt, boxes + objects,
                                             run.seed)


def simulate(run: RunConfig, scene: Scene, robot: Robot, targets: TargetGenerator, recorder=None, on_tick=None,
             target_hook=None, n_steps: int | None = None, show_progress: bool = True) -> tuple:
    """The control loop, ``n_steps`` physics steps (default: the run's duration); returns (controller, timings [s]).

    ``recorder(FrameState)`` receives the state of each video frame; ``on_tick(k, controller, q)`` runs after
    each physics step with the measured joints q (n_envs, n_dofs) (the GUI paces, pauses and draws there; it
    returns True to stop); ``target_hook(t, targets)`` may change the targets (the GUI's sliders). Target frames
    are drawn in the scene only where someone looks (GUI).
    """
    physics_hz = run.scene_config.physics_hz
    every = max(1, int(round(physics_hz / (run.controller.control_hz or physics_hz))))
    controller = make_controller(run, robot, every / physics_hz)
    first = targets(0.0)
    with scene.rendering_paused():
        markers = [scene.draw_debug_frame(first.pos[:, k], quat=first.quat[:, k], axis_length=0.08)
                   for k in range(targets.n_targets)] if scene.gui else []
    n_steps = int(round(run.duration * physics_hz)) if n_steps is None else n_steps
    frame_every, n_frames = physics_hz / run.video.fps, 0
    timings = dict(control=0.0, physics=0.0, record=0.0)
    progress = Progress("simulating", n_steps, unit="step") if show_progress else None
    m = robot.model
    controller.invariants = InvariantMonitor(m.q_lower, m.q_upper, m.v_max, robot.n_envs)
    feedback = make_feedback(run, scene, robot, targets)
    controller.feedback = feedback
    q = robot.read_states()[0]  # the first tick's measured joints
    try:
        for k in range(n_steps):
            t = k / physics_hz
            t0 = time.perf_counter()
            tick, frame_due = k % every == 0, recorder is not None and k >= n_frames * frame_every - 1e-9
            if feedback is not None and tick:
                feedback.tick(t, q, every / physics_hz)
            if tick or frame_due or markers or target_hook is not None:  # targets only where they are used
                tg = targets(t) if target_hook is None else target_hook(t, targets(t))
            if tick:
                controller.track(t, tg)
            t1 = time.perf_counter()
            for i, marker in enumerate(markers):
                marker.set_pose(tg.pos[:, i], tg.quat[:, i])
            scene.update_debug_objects()
            scene.step()
            q, v = robot.read_states()
            controller.invariants.update(q, v)
            t2 = time.perf_counter()
            if frame_due:
                recorder(FrameState(scene.t, q, tg.pos, tg.quat, latest_status(controller.telemetry, robot.n_envs),
                                    object_poses(scene), episode_codes(targets), getattr(targets, "marks", None),
                                    feedback.opening[-1] if feedback is not None and feedback.opening else None))
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
    return controller, timings


def make_feedback(run: RunConfig, scene: Scene, robot: Robot, motion):
    """What each control tick observes and commands of the grippers: one gripper (app.episode.feedback.Feedback), the arms
    of a motion that works several (app.episode.arms_feedback.ArmsFeedback), or nothing without a gripper."""
    if hasattr(motion, "arms"):
        return ArmsFeedback(scene, robot, motion, run.scene_config.robot.arms)
    return Feedback(scene, robot, motion, run.scene_config.robot.ee_link) if robot.gripper is not None else None


def frame_count(run: RunConfig) -> int:
    """Video frames of a run: one every physics_hz / fps steps, the first at the first step."""
    n_steps = int(round(run.duration * run.scene_config.physics_hz))
    return int(np.ceil(n_steps / (run.scene_config.physics_hz / run.video.fps) - 1e-9))


def video_job(run: RunConfig, outputs: OutputSet) -> VideoJob:
    workers = auto_workers() if run.video.workers is None else run.video.workers
    return VideoJob(run, outputs.temporary(run.video.filename), run.video.fps, frame_count(run), workers)


def video_look(run: RunConfig, robot: Robot, targets: TargetGenerator, env_origins: np.ndarray):
    """The video's camera and overlay for environments at ``env_origins`` (n_envs, 3)."""
    view = video_view(run, robot, targets, env_origins)
    anchors = env_origins + np.asarray(run.scene_config.robot.base_pos)
    return video_spec(run, view, env_origins, anchors)


def execute(run: RunConfig, out_dir: Path, video: bool = True, show_progress: bool = True) -> RunResult:
    """Run ``run`` and write its outputs into ``out_dir`` (all or none of them)."""
    t_start = time.perf_counter()
    outputs = OutputSet(out_dir)  # checked (and stale partial files removed) before any work
    old_video = Path(out_dir) / run.video.filename
    if not (video and run.video.enabled) and old_video.is_file():
        log.warning("%s is from an earlier run: this one makes no video", old_video)
    job = None
    try:
        job = video_job(run, outputs) if video and run.video.enabled else None  # renderers start building now
        scene, robot = build_scene(run)
        try:
            targets = run_targets(run, robot.n_envs, robot=robot)
            if job is not None:
                job.start(video_look(run, robot, targets, scene.env_origins))
            controller, timings = simulate(run, scene, robot, targets, job.add if job else None,
                                           show_progress=show_progress)
            result = final_state(run, robot, controller, targets, scene.t, scene=scene)
        finally:
            scene.close()
        return finish(run, result, robot.model, outputs, job, timings, t_start)
    except BaseException:
        abandon(outputs, job)
        raise


def finish(run: RunConfig, result: RunResult, model, outputs: OutputSet, job: VideoJob | None, timings: dict,
           t_start: float) -> RunResult:
    """Plot (while the renderers finish), video, report; then every output renamed into place together."""
    names = _write_plot(run, result, outputs)
    if job is not None:
        t0 = time.perf_counter()
        job.finish()
        timings["video_after_sim"] = time.perf_counter() - t0
        names["video"] = run.video.filename
    timings["total"] = time.perf_counter() - t_start
    result.timings = timings
    names.update(_write_report(run, result, model, outputs))
    final = outputs.commit()  # every output complete: all renamed into place now
    result.outputs = {kind: str(final[name]) for kind, name in names.items()}
    return result


def _write_plot(run: RunConfig, result: RunResult, outputs: OutputSet) -> dict[str, str]:
    if not (run.report.enabled and run.report.plot):
        return {}
    tel = result.telemetry
    plot_tracking(outputs.temporary(run.report.plot_filename), tel["t"], tel["pos_err"], tel["rot_err"], run.name,
                  arm_series(run, tel))
    return {"plot": run.report.plot_filename}


def _write_report(run: RunConfig, result: RunResult, model, outputs: OutputSet) -> dict[str, str]:
    """The report (if enabled); sets ``result.summary`` either way."""
    report = report_dict(run, result, model)
    result.summary = report["summary"]
    if not run.report.enabled:
        return {}
    write_json_atomic(outputs.temporary(run.report.filename), report)
    return {"report": run.report.filename}


def arm_series(run: RunConfig, tel: dict) -> dict[str, np.ndarray] | None:
    """Arm name -> its end effector's position error (n_ticks, n_envs), for a task that moves named arms."""
    arms, links = run.scene_config.robot.arms or {}, task_links(run)
    if "pos_err_links" not in tel or not any(link in links for link in arms.values()):
        return None
    return {arm: tel["pos_err_links"][:, :, links.index(link)] for arm, link in arms.items() if link in links}


def episode_codes(motion) -> np.ndarray | None:
    """A feedback motion's phase-or-failure code per environment (app.control.phases.episode_code), else None."""
    log = motion if hasattr(motion, "codes") else getattr(motion, "log", None)
    return None if log is None else log.codes()


def final_state(run: RunConfig, robot: Robot, controller, targets, t: float, q: np.ndarray | None = None,
                scene: Scene | None = None, envs: np.ndarray | None = None) -> RunResult:
    """The run's end at time t [s]: joints q (n_envs, n_dofs) (read from the robot unless given), link poses
    by FK, targets, telemetry and invariants; with the ``scene`` (of the environments ``envs``), its objects'
    start and final poses and a pick-and-place's results."""
    result = _final_robot(run, robot, controller, targets, t, q)
    if scene is not None and scene.objects:
        idx = slice(None) if envs is None else np.asarray(envs, dtype=int)
        starts = object_starts(run, run.n_envs or 1)
        result.objects = {}
        for name, obj in scene.objects.items():
            pos, quat = obj.poses()
            result.objects[name] = {"start_pos": starts[name][0][idx], "start_quat_wxyz": starts[name][1][idx],
                                    "final_pos": pos, "final_quat_wxyz": quat}
    feedback = getattr(controller, "feedback", None)
    if feedback is not None:
        result.telemetry.update(feedback.telemetry())
    if feedback is not None and getattr(targets, "feedback", False):
        result.episodes = targets.finish(feedback.observe(robot.read_states()[0]))
    return result


def _final_robot(run: RunConfig, robot: Robot, controller, targets, t: float, q: np.ndarray | None) -> RunResult:
    q = robot.read_states()[0] if q is None else q
    links = task_links(run)
    pos, quat = robot.forward_kinematics(robot.unbatch(q), links_idx_local=[robot.model.link_index(l) for l in links])
    tg = targets(t)
    n = robot.n_envs
    inv = getattr(controller, "invariants", None)
    invariants = {} if inv is None else {"limit_excess": inv.limit_excess, "velocity_ratio": inv.velocity_ratio}
    return RunResult(q, pos.reshape(n, len(links), 3), quat.reshape(n, len(links), 4), tg.pos, tg.quat,
                     controller.telemetry.arrays(), invariants)
