"""One run, as the seed's example loop reads: build the scene, then per tick targets -> solve ->
command -> step -> record; then write the video, the report and the plot."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.config.schema import RunConfig
from app.control.controllers import CONTROLLER_TYPES
from app.control.telemetry import InvariantMonitor
from app.control.tasks import TargetGenerator
from app.control.status import latest_status
from app.render.outputs import OutputSet
from app.render.progress import Progress
from app.render.report import finite_or_none, plot_tracking, write_json_atomic
from app.build import build_scene
from app.sim.robot import Robot
from app.sim.scene import Scene
from app.video_job import FrameState, VideoJob, auto_workers, video_spec, video_view

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


def task_links(run: RunConfig) -> list[str]:
    """The links the task moves: its own (fingertips) or the scene's end effector."""
    return list(getattr(run.task, "links", ())) or [run.scene_config.robot.ee_link]


def make_controller(run: RunConfig, robot: Robot, dt: float):
    """The configured controller (the class paired with the config's type) ticking every ``dt`` seconds."""
    boxes = tuple(b.name for b in (run.scene_config.table, *run.scene_config.obstacles) if b is not None)
    return run.controller.controller_cls.from_config(robot, run.controller, run.task, task_links(run), dt, boxes,
                                                     run.seed)


def simulate(run: RunConfig, scene: Scene, robot: Robot, targets: TargetGenerator, recorder=None, on_tick=None,
             target_hook=None) -> tuple:
    """The control loop; returns (controller, timings [s]).

    ``recorder(FrameState)`` receives the state of each video frame; ``on_tick(k)`` runs after each physics
    step (the GUI paces and pauses there; it may return True to stop); ``target_hook(t, targets)`` may change
    the targets (the GUI's sliders). Target frames are drawn in the scene only where someone looks (GUI).
    """
    physics_hz = run.scene_config.physics_hz
    every = max(1, int(round(physics_hz / (run.controller.control_hz or physics_hz))))
    controller = make_controller(run, robot, every / physics_hz)
    first = targets(0.0)
    markers = [scene.draw_debug_frame(first.pos[:, k], quat=first.quat[:, k], axis_length=0.08)
               for k in range(targets.n_targets)] if scene.gui else []
    n_steps = int(round(run.duration * physics_hz))
    frame_every, n_frames = physics_hz / run.video.fps, 0
    timings = dict(control=0.0, physics=0.0, record=0.0)
    progress = Progress("simulating", n_steps, unit="step")
    m = robot.model
    controller.invariants = InvariantMonitor(m.q_lower, m.q_upper, m.v_max, robot.n_envs)
    try:
        for k in range(n_steps):
            t = k / physics_hz
            tg = targets(t) if target_hook is None else target_hook(t, targets(t))
            t0 = time.perf_counter()
            if k % every == 0:
                controller.track(t, tg)
            t1 = time.perf_counter()
            for i, marker in enumerate(markers):
                marker.set_pose(tg.pos[:, i], tg.quat[:, i])
            scene.update_debug_objects()
            scene.step()
            q, v = robot.read_states()
            controller.invariants.update(q, v)
            t2 = time.perf_counter()
            if recorder is not None and k >= n_frames * frame_every - 1e-9:
                recorder(FrameState(scene.t, q, tg.pos, tg.quat, latest_status(controller.telemetry, robot.n_envs)))
                n_frames += 1
            timings["control"] += t1 - t0
            timings["physics"] += t2 - t1
            timings["record"] += time.perf_counter() - t2
            if on_tick is not None and on_tick(k):
                break
            if k % 20 == 0:
                progress.update(k)
        progress.update(n_steps)
    finally:
        progress.close()
    return controller, timings


def frame_count(run: RunConfig) -> int:
    """Video frames of a run: one every physics_hz / fps steps, the first at the first step."""
    n_steps = int(round(run.duration * run.scene_config.physics_hz))
    return int(np.ceil(n_steps / (run.scene_config.physics_hz / run.video.fps) - 1e-9))


def _video_job(run: RunConfig, outputs: OutputSet) -> VideoJob:
    workers = auto_workers() if run.video.workers is None else run.video.workers
    return VideoJob(run, outputs.temporary(run.video.filename), run.video.fps, frame_count(run), workers)


def _video_look(run: RunConfig, scene: Scene, robot: Robot, targets: TargetGenerator):
    view = video_view(run, robot, targets, scene.env_origins)
    anchors = scene.env_origins + np.asarray(run.scene_config.robot.base_pos)
    return video_spec(run, view, scene.env_origins, anchors)


def execute(run: RunConfig, out_dir: Path, video: bool = True, gui: bool = False, on_tick=None) -> RunResult:
    """Run ``run`` and write its outputs into ``out_dir`` (all or none of them)."""
    t_start = time.perf_counter()
    outputs = OutputSet(out_dir)  # checked (and stale partial files removed) before any work
    job = None
    try:
        job = _video_job(run, outputs) if video and run.video.enabled else None  # renderers start building now
        scene, robot = build_scene(run, gui)
        try:
            targets = TargetGenerator(run.task, robot.n_envs, np.array(run.scene_config.robot.base_pos), run.seed)
            if job is not None:
                job.start(_video_look(run, scene, robot, targets))
            controller, timings = simulate(run, scene, robot, targets, job.add if job else None, on_tick)
            result = final_state(run, scene, robot, controller, targets)
        finally:
            scene.close()
        names = _write_plot(run, result, outputs)  # while the renderers finish
        if job is not None:
            t0 = time.perf_counter()
            job.finish()
            timings["video_after_sim"] = time.perf_counter() - t0
            names["video"] = run.video.filename
        timings["total"] = time.perf_counter() - t_start
        result.timings = timings
        names.update(_write_report(run, result, robot.model, outputs))
        final = outputs.commit()  # every output complete: all renamed into place now
    except BaseException:
        if job is not None:
            job.abort()
        outputs.discard()
        raise
    result.outputs = {kind: str(final[name]) for kind, name in names.items()}
    return result


def _write_plot(run: RunConfig, result: RunResult, outputs: OutputSet) -> dict[str, str]:
    if not (run.report.enabled and run.report.plot):
        return {}
    tel = result.telemetry
    plot_tracking(outputs.temporary(run.report.plot_filename), tel["t"], tel["pos_err"], tel["rot_err"], run.name)
    return {"plot": run.report.plot_filename}


def _write_report(run: RunConfig, result: RunResult, model, outputs: OutputSet) -> dict[str, str]:
    if not run.report.enabled:
        return {}
    write_json_atomic(outputs.temporary(run.report.filename), report_dict(run, result, model))
    return {"report": run.report.filename}


def final_state(run, scene, robot, controller, targets) -> RunResult:
    q = robot.read_states()[0]
    links = task_links(run)
    pos, quat = robot.forward_kinematics(robot.unbatch(q), links_idx_local=[robot.model.link_index(l) for l in links])
    tg = targets(scene.t)
    n = robot.n_envs
    inv = getattr(controller, "invariants", None)
    invariants = {} if inv is None else {"limit_excess": inv.limit_excess, "velocity_ratio": inv.velocity_ratio}
    return RunResult(q, pos.reshape(n, len(links), 3), quat.reshape(n, len(links), 4), tg.pos, tg.quat,
                     controller.telemetry.arrays(), invariants)


REACHED_POS, REACHED_ROT = 1e-3, 1e-2  # [m], [rad]: the report's "reached_final" tolerance


def invariant_summary(run: RunConfig, result: RunResult) -> dict:
    """The worst value over every environment and physics step of each promise the simulated arms keep."""
    inv, tel = result.invariants, result.telemetry
    d_safe = getattr(run.controller, "d_safe", None)
    return {"joint_limit_excess_max_rad": float(inv["limit_excess"].max()),
            "joint_limit_promise_rad": 1e-6,
            "velocity_over_bound_max": float(inv["velocity_ratio"].max()),
            "velocity_promise": None if getattr(run.controller, "mode", "control") == "kinematic" else 1.02,
            "min_obstacle_distance_m": finite_or_none(np.min(tel["min_distance"])) if len(tel["t"]) else None,
            "obstacle_promise_m": None if d_safe is None else d_safe - 1e-4}


def report_dict(run: RunConfig, result: RunResult, model) -> dict:
    """Per environment: final joints, link poses, targets, errors, flags, margins; plus timings."""
    tel = result.telemetry
    margin = np.minimum(result.q_final - model.q_lower, model.q_upper - result.q_final).min(axis=1)
    envs = []
    for e in range(len(result.q_final)):
        envs.append({
            "env": e,
            "q_final": result.q_final[e],
            "links_pos": result.ee_pos[e], "links_quat_wxyz": result.ee_quat[e],
            "target_pos": result.targets_pos[e], "target_quat_wxyz": result.targets_quat[e],
            "pos_err_final_m": float(tel["pos_err"][-1, e]), "rot_err_final_rad": float(tel["rot_err"][-1, e]),
            "pos_err_max_after_1s_m": float(np.max(tel["pos_err"][tel["t"] >= min(1.0, tel["t"][-1]), e])),
            "solver_ok_fraction": float(np.mean(tel["qp_ok"][:, e])), "solver_ok_final": bool(tel["qp_ok"][-1, e]),
            "reached_final": bool(tel["pos_err"][-1, e] <= REACHED_POS and tel["rot_err"][-1, e] <= REACHED_ROT),
            "joint_limit_margin_min": float(margin[e]),
            "stalled_final": bool(tel["stalled"][-1, e]), "stalled_ever": bool(tel["stalled"][:, e].any()),
            "min_obstacle_distance_m": finite_or_none(np.min(tel["min_distance"][:, e])),
            "joint_limit_excess_max_rad": float(result.invariants["limit_excess"][e]),
            "velocity_over_bound_max": float(result.invariants["velocity_ratio"][e]),
        })
    controller = next(k for k, v in CONTROLLER_TYPES.items() if isinstance(run.controller, v))
    return {"config": run.name, "controller": controller, "task": run.task.type,
            "n_envs": len(envs), "duration_s": run.duration, "seed": run.seed,
            "reached_tolerance": {"pos_m": REACHED_POS, "rot_rad": REACHED_ROT},
            "invariants": invariant_summary(run, result),
            "timings_s": {k: round(v, 4) for k, v in result.timings.items()}, "environments": envs}
