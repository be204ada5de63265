"""A recorded episode played through the simulated motors (``python -m app.replay``): frame k's command is
where the joints should be at the frame's end; over its physics steps the motor target ramps from the previous
command (the recorded start state for k = 0) to it, each step given the ramp's position at the step's start and
its velocity as feed-forward (PyBullet's motor then lands on the ramp; the target at the step's end would lag one
step). The scene's objects are watched every frame: where they are, and whether the robot touches them."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from app.config.schema import MAX_DURATION
from app.dataset import UnitsGuess, convert
from app.dataset.records import RecordedDataset
from app.dataset.robot_map import DofMap, map_to_robot
from app.errors import DatasetError
from app.quality.limits import MotionLimits
from app.quality.motion_report import MotionSamples, analyse
from app.sim.robot import Robot
from app.sim.scene import Scene

POSITION_GAIN = 0.3  # PyBullet motor kp along the ramp (the velocity feed-forward carries most of the motion)


class Replay(NamedTuple):
    """One replayed episode, per frame k (n frames). Joint arrays hold the mapped DOFs (n_mapped), SI units.

    Attributes:
        t: Frame times [s]. Shape (n,).
        q_cmd: Commanded positions. Shape (n, n_mapped).
        q_sim: Simulated positions at the frame's start (before its command). Shape (n, n_mapped).
        tracking_err: max |q_sim[k + 1] - q_cmd[k]| over the mapped arm joints [rad] (the last frame: after
            its steps). Shape (n,).
        limit_excess: How far the command lies beyond the joint limits (0 inside) [rad or m]. Shape (n,).
        velocity_excess: max over DOFs of |q_cmd[k + 1] - q_cmd[k]| * fps - v_max, 0 when within. Shape (n,).
        contacts: Robot links touching another body at the frame's end. Shape (n,).
        ee_pos: End-effector position (FK of q_sim, environment frame) [m]. Shape (n, 3).
        ee_gap: Distance from ee_pos to FK of the recorded state [m]; NaN-free, empty when no state. Shape (n,).
        object_contacts: Robot links touching one of the scene's objects at the frame's end. Shape (n,).
        objects: The objects' poses at each frame's end (position [m], quat wxyz, environment frame).
            Shape (n, n_objects, 7); (n, 0, 7) without objects.
        ee_recorded: FK of the recorded state's end effector [m] (the overlay's target). Shape (n, 3).
        limit_excess_dof, velocity_excess_dof: per frame the mapped DOF (its robot name) whose excess the two
            excess rows give ('' where none exceeds). Shape (n,).
        revolute: per mapped DOF name, whether it turns (rad, rad/s) or slides (m, m/s).
        motion: the motion-quality report (app.quality.motion_report) of the mapped arm joints: the commands
            against the joints measured at each frame's end, from the recorded start.
    """
    t: np.ndarray
    q_cmd: np.ndarray
    q_sim: np.ndarray
    tracking_err: np.ndarray
    limit_excess: np.ndarray
    velocity_excess: np.ndarray
    contacts: np.ndarray
    ee_pos: np.ndarray
    ee_gap: np.ndarray
    object_contacts: np.ndarray
    objects: np.ndarray
    ee_recorded: np.ndarray
    limit_excess_dof: np.ndarray = np.zeros(0, dtype=object)
    velocity_excess_dof: np.ndarray = np.zeros(0, dtype=object)
    revolute: dict | None = None
    motion: dict | None = None  # the motion-quality report of the arm joints (app.quality), frame by frame


def check_rate(fps: float, n_frames: int, physics_hz: float) -> None:
    """A replay of ``n_frames`` at ``fps`` [Hz]: a finite rate > 0 and at most the physics rate, and at most
    MAX_DURATION of simulated time (fps 0.001 would step the physics for hours a frame). DatasetError otherwise."""
    if not (np.isfinite(fps) and 0 < fps <= physics_hz):
        raise DatasetError(f"the dataset's fps is {fps:g}; a replay needs a rate in (0, {physics_hz:g}] Hz (the "
                           "scene's physics rate)")
    if n_frames / fps > MAX_DURATION:
        raise DatasetError(f"the episode's {n_frames} frames at {fps:g} Hz last {n_frames / fps:.4g} s; a replay "
                           f"simulates at most {MAX_DURATION:g} s")


def steps_per_frame(n_frames: int, fps: float, physics_hz: float) -> np.ndarray:
    """Physics steps of each frame: frame k spans steps floor(k hz / fps) .. floor((k + 1) hz / fps)."""
    check_rate(fps, n_frames, physics_hz)
    edges = np.floor(np.arange(n_frames + 1) * physics_hz / fps + 1e-9).astype(int)
    return np.diff(edges)


def _ee(robot: Robot, ee: int, q_rows: np.ndarray, dof_map: DofMap) -> np.ndarray:
    """End-effector positions (n, 3) for rows of the mapped DOFs (the others at the current state)."""
    q = np.tile(robot.read_states()[0][0], (len(q_rows), 1))
    q[:, dof_map.dofs] = q_rows
    return robot.base.poses_from_base(*robot.model.forward_kinematics(q, [ee]))[0][:, 0]


def _command(robot: Robot, dofs: np.ndarray, target: np.ndarray, qdot: np.ndarray, gain: float, dt: float) -> None:
    """Motor targets (position at the step's start, velocity feed-forward) for ``dofs``; where the scene's robot
    has a gripper, its fingers close through it (force-limited, as in a recorded run) to the targets' fraction."""
    gripper = robot.gripper
    fingers = np.isin(dofs, gripper.dofs) if gripper is not None else np.zeros(len(dofs), dtype=bool)
    robot.control_dofs_position(target[~fingers], dofs[~fingers], velocity=qdot[~fingers], position_gain=gain)
    if fingers.any():
        idx = [list(gripper.dofs).index(d) for d in dofs[fingers]]
        span = gripper.closed[idx] - gripper.open[idx]
        closing = np.mean((target[fingers] - gripper.open[idx]) / np.where(np.abs(span) > 1e-12, span, 1.0))
        gripper.command(np.array([closing]), robot.read_states()[0], dt)


def object_pose_rows(scene: Scene) -> np.ndarray:
    """Environment 0's objects now: (n_objects, 7) position [m], quat wxyz; (0, 7) without objects."""
    rows = [np.concatenate([p[0], q[0]]) for p, q in (obj.poses() for obj in scene.objects.values())]
    return np.array(rows).reshape(-1, 7)


def _touching(robot: Robot, scene: Scene) -> tuple[int, int]:
    """(robot links touching anything, robot links touching one of the scene's objects), environment 0."""
    touching = robot.contact_links(0)
    objects = {obj.body_ids[0] for obj in scene.objects.values()}
    return (sum(len(links) for links in touching.values()),
            sum(len(links) for body, links in touching.items() if body in objects))


def replay_episode(robot: Robot, scene: Scene, dataset: RecordedDataset, episode: int, guess: UnitsGuess,
                   source: str, ee_link: str, physics_hz: float, position_gain: float = POSITION_GAIN,
                   on_frame: Callable[[int, float], None] | None = None) -> Replay:
    """Play ``dataset.episodes[episode]``'s ``source`` ("action" or "state") through ``robot``'s motors (see the
    module docstring); ``on_frame(k, t)`` runs after frame k's physics steps (t [s] the scene's time then)."""
    record = dataset.episodes[episode]
    names = dataset.action_names if source == "action" else dataset.state_names
    dof_map = map_to_robot(list(names), list(robot.model.dof_names))
    q_cmd = convert(record.action if source == "action" else record.state, guess.units, "si")[:, dof_map.columns]
    state = convert(record.state, guess.units, "si")[:, dof_map.columns] if len(record.state) else q_cmd
    steps = steps_per_frame(len(q_cmd), dataset.fps, physics_hz)
    lo, hi = robot.model.q_lower[dof_map.dofs], robot.model.q_upper[dof_map.dofs]
    v_max = robot.model.v_max[dof_map.dofs]
    robot.set_qpos(np.clip(state[0], lo, hi), dof_map.dofs)
    n = len(q_cmd)
    q_sim, after = np.empty_like(q_cmd), np.empty_like(q_cmd)
    contacts, object_contacts = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    objects = np.zeros((n, len(scene.objects), 7))
    previous = state[0]
    for k in range(n):
        q_sim[k] = robot.read_states()[0][0, dof_map.dofs]
        qdot = (q_cmd[k] - previous) * dataset.fps
        for i in range(steps[k]):  # the target ramps from the last command to this one over the frame
            _command(robot, dof_map.dofs, previous + i / steps[k] * (q_cmd[k] - previous), qdot, position_gain,
                     1.0 / physics_hz)
            scene.step()
        previous = q_cmd[k]
        after[k] = robot.read_states()[0][0, dof_map.dofs]
        contacts[k], object_contacts[k] = _touching(robot, scene)
        objects[k] = object_pose_rows(scene)
        if on_frame is not None:
            on_frame(k, scene.t)
    arm = np.flatnonzero(~np.isin(dof_map.columns % 7, [6]))
    ee = robot.model.link_index(ee_link)
    ee_pos, ee_recorded = _ee(robot, ee, q_sim, dof_map), _ee(robot, ee, state, dof_map)
    limit = np.maximum(np.maximum(lo - q_cmd, q_cmd - hi), 0)
    speed = np.maximum(np.abs(np.diff(np.vstack([state[:1], q_cmd]), axis=0)) * dataset.fps - v_max, 0)
    names = np.array([robot.model.dof_names[d] for d in dof_map.dofs], dtype=object)
    return Replay(t=np.arange(n) / dataset.fps, q_cmd=q_cmd, q_sim=q_sim,
                  tracking_err=np.abs(after - q_cmd)[:, arm].max(axis=1),
                  limit_excess=limit.max(axis=1), velocity_excess=speed.max(axis=1), contacts=contacts, ee_pos=ee_pos,
                  ee_gap=np.linalg.norm(ee_pos - ee_recorded, axis=1), object_contacts=object_contacts,
                  objects=objects, ee_recorded=ee_recorded, limit_excess_dof=_worst(limit, names),
                  velocity_excess_dof=_worst(speed, names),
                  revolute={str(nm): bool(robot.model.revolute[d]) for nm, d in zip(names, dof_map.dofs)},
                  motion=_motion(robot, dof_map.dofs[arm], q_sim[0, arm], q_cmd[:, arm], after[:, arm], dataset.fps))


def _motion(robot: Robot, dofs: np.ndarray, start: np.ndarray, q_cmd: np.ndarray, after: np.ndarray,
            fps: float) -> dict:
    """The replay's motion-quality report: from the recorded start (nothing commanded yet), each frame's command
    against the joints at the frame's end."""
    nothing = np.full((1, len(dofs)), np.nan)
    samples = MotionSamples(1.0 / fps, np.vstack([start[None], after]), np.vstack([nothing, q_cmd]))
    return analyse(samples, MotionLimits.of_model(robot.model, dofs))


def _worst(excess: np.ndarray, names: np.ndarray) -> np.ndarray:
    """Per frame the name of the DOF with the largest excess (n, n_mapped), '' where none exceeds."""
    return np.where(excess.max(axis=1) > 0, names[excess.argmax(axis=1)], "")
