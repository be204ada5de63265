"""One run of a config with its outputs: build the scene, make the motion, run the episode (app.episode.loop) while
the video renders, then write the plot, the video and the report, all renamed into place together or none."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from app.config.randomization import randomization_of
from app.config.schema import RunConfig
from app.control.motion_protocol import Motion
from app.control.phases import code_label
from app.episode.loop import RunResult, final_state, simulate
from app.episode.motion_factory import run_motion
from app.episode.run_report import report_dict, task_links
from app.episode.scene_build import build_scene
from app.episode.video_job import VideoJob, auto_workers, video_spec, video_view
from app.render.report import plot_tracking, write_json_atomic
from app.runtime.outputs import OutputSet
from app.sim.robot import Robot

log = logging.getLogger(__name__)


def abandon(outputs: OutputSet, job: VideoJob | None) -> None:
    """A run failed or was interrupted: render processes stopped, no output written or replaced."""
    if job is not None:
        job.abort()
    outputs.discard()

def frame_count(run: RunConfig) -> int:
    """Video frames of a run: one every physics_hz / fps steps, the first at the first step."""
    n_steps = int(round(run.duration * run.scene_config.physics_hz))
    return int(np.ceil(n_steps / (run.scene_config.physics_hz / run.video.fps) - 1e-9))


def video_job(run: RunConfig, outputs: OutputSet) -> VideoJob:
    workers = auto_workers() if run.video.workers is None else run.video.workers
    return VideoJob(run, outputs.temporary(run.video.filename), run.video.fps, frame_count(run), workers)


def video_look(run: RunConfig, robot: Robot, motion: Motion, env_origins: np.ndarray):
    """The video's camera and overlay for environments at ``env_origins`` (n_envs, 3)."""
    view = video_view(run, robot, motion, env_origins)
    anchors = env_origins + np.asarray(run.scene_config.robot.base_pos)
    return video_spec(run, view, env_origins, anchors)


def execute(run: RunConfig, out_dir: Path, video: bool = True, show_progress: bool = True) -> RunResult:
    """Run ``run`` and write its outputs into ``out_dir`` (all or none of them)."""
    t_start = time.perf_counter()
    outputs = OutputSet(out_dir)  # checked (and stale partial files removed) before any work
    old_video = Path(out_dir) / run.video.filename
    if not (video and run.video.enabled) and old_video.is_file():
        log.warning("%s is from an earlier run: this one makes no video", old_video)
    if randomization_of(run) is not None:
        log.warning("randomization: is drawn per episode by app.record; this run's environments share the scene as "
                    "configured")
    job = None
    try:
        job = video_job(run, outputs) if video and run.video.enabled else None  # renderers start building now
        scene, robot = build_scene(run)
        try:
            motion = run_motion(run, robot.n_envs, robot=robot)
            if job is not None:
                job.start(video_look(run, robot, motion, scene.env_origins))
            episode, timings = simulate(run, scene, robot, motion, job.add if job else None,
                                        show_progress=show_progress)
            result = final_state(run, robot, episode, motion, scene.t, scene=scene)
        finally:
            scene.close()
        return finish(run, result, robot.model, outputs, job, timings, t_start)
    except BaseException:
        abandon(outputs, job)
        raise


def finish(run: RunConfig, result: RunResult, model, outputs: OutputSet, job: VideoJob | None, timings: dict,
           t_start: float) -> RunResult:
    """Plot (while the renderers finish), video, report; then every output renamed into place together."""
    names = write_plot(run, result, outputs)
    if job is not None:
        t0 = time.perf_counter()
        job.finish()
        timings["video_after_sim"] = time.perf_counter() - t0
        names["video"] = run.video.filename
    timings["total"] = time.perf_counter() - t_start
    result.timings = timings
    names.update(write_report(run, result, model, outputs))
    final = outputs.commit()  # every output complete: all renamed into place now
    result.outputs = {kind: str(final[name]) for kind, name in names.items()}
    return result


def write_plot(run: RunConfig, result: RunResult, outputs: OutputSet) -> dict[str, str]:
    if not (run.report.enabled and run.report.plot):
        return {}
    tel = result.telemetry
    plot_tracking(outputs.temporary(run.report.plot_filename), tel["t"], tel["pos_err"], tel["rot_err"], run.name,
                  arm_series(run, tel), phase_counts(tel))
    return {"plot": run.report.plot_filename}


def write_report(run: RunConfig, result: RunResult, model, outputs: OutputSet) -> dict[str, str]:
    """The report (if enabled); sets ``result.summary`` either way."""
    report = report_dict(run, result, model)
    result.summary = report["summary"]
    if not run.report.enabled:
        return {}
    write_json_atomic(outputs.temporary(run.report.filename), report)
    return {"report": run.report.filename}


def phase_counts(tel: dict) -> dict[str, np.ndarray] | None:
    """A feedback motion's phases over the run: word -> how many environments are in it at each tick (n_ticks,),
    in the order the phases come; None for a motion without phases."""
    codes = tel.get("episode_codes")
    if codes is None or len(codes) != len(tel["t"]):
        return None
    return {code_label(int(c)): (codes == c).sum(axis=1) for c in sorted(set(np.unique(codes)))}


def arm_series(run: RunConfig, tel: dict) -> dict[str, np.ndarray] | None:
    """Arm name -> its end effector's position error (n_ticks, n_envs), for a task that moves named arms."""
    arms, links = run.scene_config.robot.arms or {}, task_links(run)
    if "pos_err_links" not in tel or not any(link in links for link in arms.values()):
        return None
    return {arm: tel["pos_err_links"][:, :, links.index(link)] for arm, link in arms.items() if link in links}
