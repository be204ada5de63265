"""What ``python -m app.track`` runs: the config's robot (ideal joints, or the PyBullet scene with ``--physics``)
and controller, the trajectory sampled at the control rate, the loop (app.control.trajectory_loop), the outputs."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.config.robots import robot_description
from app.config.schema import RunConfig
from app.control.motions import PoseMotion
from app.control.robot_protocol import IntegratorRobot
from app.control.stall_causes import StallDiagnosis, StallLimits
from app.control.trajectory_loop import track
from app.control.trajectory_targets import sample_ticks
from app.dataset.trajectory import EETrajectory, read_ee_trajectory, write_table
from app.episode.scene_build import build_scene
from app.errors import InputError
from app.ik.robot_model import RobotModel
from app.kinematics.arms import cross_arm_pairs
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import quat_normalize, quat_to_matrix
from app.quality.limits import MotionLimits, samples_every
from app.quality.motion_report import MotionSamples, analyse, summary_line
from app.render.report import write_json_atomic
from app.runtime.outputs import OutputSet

MAX_RATE = 10_000.0  # [Hz]
MIN_RATE = 1.0  # [Hz]: a control tick at least every second (1e-200 Hz printed '1 ticks' and a 1e201x pace)
MAX_TICKS = 1_000_000  # a trajectory's ticks at the control rate (each an IK or QP solve, ~0.1-1 ms: minutes)
POS_MASK = (True, True, True)  # a trajectory's positions are tracked on every axis


class QueryRobot(IntegratorRobot):
    """Ideal joints whose distance rows are PyBullet's closest points on a scene posed at q (no physics step)."""

    def __init__(self, model: RobotModel, scene_robot, q0: np.ndarray, base: BaseFrame):
        super().__init__(model, 1, q0, base.R, base.p)
        self.scene_robot = scene_robot
        self._at_rest, self._env = np.zeros((1, model.n_dofs)), np.arange(1)  # made once: every tick poses env 0

    def distance_rows(self, q, pairs, grasp=None):
        self.scene_robot.teleport(q, self._at_rest, self._env)  # the ideal joints are within their limits
        return self.scene_robot.distance_rows(q, pairs, grasp)


def ik_model(run: RunConfig) -> RobotModel:
    """The scene's robot (or rig) as a RobotModel."""
    return RobotModel(robot_description(run.scene_config).spec)  # the loader's, parsed once


def _rot_mask(text: str) -> tuple[bool, bool, bool]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or any(p not in ("0", "1") for p in parts) or parts.count("1") == 2:
        raise InputError(f"--rot-mask {text!r}: three of 0/1 separated by commas, all, one or none set (e.g. 1,1,1)")
    return tuple(p == "1" for p in parts)


def arm_links(run: RunConfig, traj: EETrajectory) -> tuple[list[str], list[str]]:
    """(arm names, end-effector links) of the trajectory's arms; unprefixed columns: the robot's ee_link."""
    robot = run.scene_config.robot
    if traj.arms == (None,):
        return ["arm"], [robot.ee_link]
    return list(traj.arms), [robot.arms[a] for a in traj.arms]


def start_config(model: RobotModel, run: RunConfig, links: list[str], base: BaseFrame, traj, rot_mask) -> np.ndarray:
    """The joints at the trajectory's first poses (IK seeded from the scene's init_qpos), clipped into the limits."""
    init = run.scene_config.robot.init_qpos
    seed = model.mid_config() if init is None else np.array(init)
    pos, quat = base.targets_to_base(traj.pos[0], traj.quat[0])
    kw = dict(init_qpos=seed, rot_mask=rot_mask, warn=False, return_info=True)
    info = model.inverse_kinematics(links[0], pos[0], quat[0], **kw) if len(links) == 1 else \
        model.inverse_kinematics_multilink(links, list(pos), list(quat), **kw)
    return model.clip(np.asarray(info.q, dtype=float).reshape(-1))


def _controller(run: RunConfig, robot, links: list[str], rot_mask, dt: float, scene_robot):
    """The config's controller for the trajectory's links; with a PyBullet ``scene_robot`` (or None) a QP watches
    the table and obstacles and, for several arms (``arm_pairs``), every cross-arm pair of collision links, as a
    run's does (app.episode.loop.make_controller)."""
    config = dataclasses.replace(run.controller, dt=dt)
    task = PoseMotion(pos_mask=POS_MASK, rot_mask=rot_mask)  # the file's poses, whatever the config's task
    s, boxes = run.scene_config, ()
    if scene_robot is not None:
        boxes = tuple(b.name for b in (s.table, *s.obstacles) if b is not None)
        if _watches_arm_pairs(run):
            pairs = tuple(p for p in cross_arm_pairs(robot.model, list(s.robot.arms.values()))
                          if p[0] in scene_robot.collision_links and p[1] in scene_robot.collision_links)
            config = dataclasses.replace(config, self_pairs=config.self_pairs + pairs)
    if scene_robot is not None and config.rows_from_spheres:
        return config.controller_cls.from_config(robot, config, task, links, dt, (), run.seed,
                                                 collision=scene_robot.sphere_model(boxes, config.self_pairs))
    return config.controller_cls.from_config(robot, config, task, links, dt, boxes, run.seed)


def _watches_arm_pairs(run: RunConfig) -> bool:
    return run.controller.keeps_arms_apart and len(run.scene_config.robot.arms or {}) >= 2


def _bounds(run: RunConfig, model: RobotModel, robot) -> np.ndarray:
    v = model.v_max * run.controller.velocity_scale
    held = np.setdiff1d(np.arange(model.n_dofs), robot.arm_dofs)
    v = np.where(np.isfinite(v), v, 1e9)
    v[held] = 0.0
    return v


def _rate(args, run: RunConfig) -> tuple[float, int]:
    """(control rate [Hz], physics steps per tick): --rate, else the controller's control_hz, else the physics
    rate; with --physics the nearest whole number of physics steps per tick."""
    s = run.scene_config
    rate = float(args.rate if args.rate is not None else run.controller.control_hz or s.physics_hz)
    if not np.isfinite(rate) or not MIN_RATE <= rate <= MAX_RATE:
        raise InputError(f"--rate must be in [{MIN_RATE:g}, {MAX_RATE:g}] Hz, got {rate:g}")
    if not args.physics:
        return rate, 1
    every = int(round(s.physics_hz / rate))  # the rate is rounded to physics_hz / every
    if every < 1:  # nothing to round to: not silently the physics rate
        raise InputError(f"--rate {rate:g} Hz with --physics: the control rate must be at most about the scene's "
                         f"physics rate, {s.physics_hz:g} Hz (a command every physics step or fewer)")
    return s.physics_hz / every, every


def _base(run: RunConfig) -> BaseFrame:
    r = run.scene_config.robot
    return BaseFrame(quat_to_matrix(quat_normalize(np.asarray(r.base_quat, dtype=float))),
                     np.asarray(r.base_pos, dtype=float))


@contextmanager
def _robot(args, run: RunConfig, model: RobotModel, base: BaseFrame, q0: np.ndarray, every: int):
    """(robot, advance(), the PyBullet robot or None) at q0: ideal joints (their collision rows from a PyBullet scene
    posed at q, where a QP watches the table, obstacles or arm pairs), or with --physics the PyBullet robot."""
    s = run.scene_config
    is_qp = run.controller.controller_cls.__name__ == "QPController"
    needs_scene = args.physics or (is_qp and (s.table is not None or bool(s.obstacles) or _watches_arm_pairs(run)))
    if not needs_scene:
        robot = IntegratorRobot(model, 1, q0, base.R, base.p)
        yield robot, robot.step, None
        return
    scene, scene_robot = build_scene(run)
    try:
        scene_robot.set_state(q0[None])
        if args.physics:
            yield scene_robot, lambda: [scene.step() for _ in range(every)], scene_robot
        else:
            robot = QueryRobot(model, scene_robot, q0, base)
            yield robot, robot.step, scene_robot
    finally:
        scene.close()


def run_track(args) -> dict:
    """Run ``python -m app.track`` for parsed ``args``; returns the report (also written with the joints)."""
    run = load_run_config(args.config, n_envs=1, workers=1)
    traj_path = Path(args.trajectory)
    traj = read_ee_trajectory(traj_path, sorted(run.scene_config.robot.arms or {}))
    out = Path(args.out) if args.out else Path("runs/track") / traj_path.stem
    rot_mask = _rot_mask(args.rot_mask)
    arms, links = arm_links(run, traj)
    rate, every = _rate(args, run)
    ticks = (traj.t[-1] - traj.t[0]) * rate
    if ticks > MAX_TICKS:
        raise InputError(f"{traj_path}: t spans {traj.t[-1] - traj.t[0]:g} s, {ticks:.3g} ticks at {rate:g} Hz; at most "
                         f"{MAX_TICKS:,} (a lower --rate or a shorter trajectory)")
    if not np.isfinite(args.singular_threshold) or args.singular_threshold < 0:
        raise InputError(f"--singular-threshold must be a number >= 0, got {args.singular_threshold}")
    outputs = OutputSet(out)  # after the checks: a refused run leaves no folder
    model = ik_model(run)
    base = _base(run)
    targets = sample_ticks(traj.t, base.p + traj.pos, traj.quat, rate)
    q0 = start_config(model, run, links, base, traj, rot_mask)
    with _robot(args, run, model, base, q0, every) as (robot, advance, scene_robot):
        controller = _controller(run, robot, links, rot_mask, 1.0 / rate, scene_robot)
        limits = StallLimits(singular_threshold=args.singular_threshold)
        diagnosis = StallDiagnosis(robot.model, links, POS_MASK, rot_mask, _bounds(run, model, robot),
                                   run.controller.accel_max, 1.0 / rate, limits, carry=True)
        result = track(robot, controller, diagnosis, arms, targets, advance)
        dofs = np.asarray(robot.arm_dofs)
    every = samples_every(rate)  # the joints the tracker moved, differenced at app.run's resolution
    motion = analyse(MotionSamples(every / rate, result.q[::every, dofs]),
                     MotionLimits.of_model(model, dofs, run.controller.accel_max))
    return _write(args, run, traj, traj_path, outputs, model, targets, result, arms, links, rate, limits, motion)


def _joint_columns(model: RobotModel, t: np.ndarray, q: np.ndarray, traj: EETrajectory, arms: list[str]) -> dict:
    columns = {"t": t}
    columns.update({name: q[:, i] for i, name in enumerate(model.dof_names)})
    if traj.gripper is not None:
        for j, arm in enumerate(arms):
            g = np.interp(t, traj.t, np.nan_to_num(traj.gripper[:, j]))
            columns["gripper" if traj.arms == (None,) else f"{arm}.gripper"] = g
    return columns


def _write(args, run, traj, traj_path, outputs, model, targets, result, arms, links, rate, limits, motion) -> dict:
    fmt = "." + (args.format or traj_path.suffix.lower().lstrip("."))
    joints_name = f"joints{fmt}"
    try:
        write_table(outputs.temporary(joints_name), _joint_columns(model, targets.t, result.q, traj, arms))
        duration = float(targets.t[-1] - targets.t[0]) + 1.0 / rate
        by_cause: dict[str, int] = {}
        for s in result.stretches:
            by_cause[s.cause] = by_cause.get(s.cause, 0) + 1
        report = {
            "trajectory": str(traj_path), "config": str(args.config),
            "controller": run.controller.controller_cls.__name__,
            "physics": bool(args.physics), "rate_hz": rate, "n_ticks": len(targets.t), "n_waypoints": len(traj.t),
            "arms": dict(zip(arms, links)), "rot_mask": list(_rot_mask(args.rot_mask)),
            "thresholds": dataclasses.asdict(limits), "stretches": [s.as_dict() for s in result.stretches],
            "stretch_lines": [s.line() for s in result.stretches],
            "summary": {"stretches": len(result.stretches), "by_cause": by_cause,
                        "behind_s": sum((s.last - s.first + 1) / rate for s in result.stretches),
                        "motion": summary_line([motion])},
            "motion": motion,
            "timings": {"loop_s": result.wall_s, "x_real_time": duration / max(result.wall_s, 1e-9),
                        "loop_cpu_s": result.cpu_s, "x_real_time_cpu": duration / max(result.cpu_s, 1e-9),
                        "diagnosed_ticks": result.diagnosed_ticks},
        }
        write_json_atomic(outputs.temporary("track.json"), {k: v for k, v in report.items() if k != "stretch_lines"})
        final = outputs.commit()
    except BaseException:
        outputs.discard()
        raise
    report["outputs"] = {"joints": str(final[joints_name]), "report": str(final["track.json"])}
    return report

