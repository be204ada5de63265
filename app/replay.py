"""Command line: ``python -m app.replay DATASET [--episode K] [--units si|trossen|auto] [--source action|state]
[--config CONFIG] [--out DIR]``.

Plays one recorded episode (LeRobot v3.0 or v2.1, ACT HDF5) through the simulated motors: the dataset's joint
names are mapped onto the robot's DOFs (one arm or two), values converted to SI (``auto`` says what it
assumed), the arm put at the recorded start, then every frame's command held for its share of physics steps.
Reports per frame the tracking error, the commands' joint-limit and velocity-bound excess, contacts with other
bodies, the end-effector path (FK of the simulated joints) and, where the dataset has states, the
end-effector distance to the recorded state's. Writes ``replay.json`` and ``replay.png`` (commanded vs
simulated joints) atomically. A dataset that does not fit the robot is one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.config.loader import load_run_config
from app.config.schema import MAX_DURATION
from app.dataset import UnitsGuess, convert, dataset_units, load_dataset
from app.dataset.records import RecordedDataset
from app.dataset.robot_map import DofMap, map_to_robot
from app.episode.scene_build import build_scene
from app.errors import DatasetError
from app.render.report import save_figure_atomic, write_json_atomic
from app.runtime.command import command_main
from app.sim.robot import Robot

log = logging.getLogger("app.replay")
DEFAULT_CONFIG = "configs/single_ik.yaml"  # the WidowX AI at a table; only its scene is used
MAX_ACT_FPS = 1000.0  # [Hz] assumed for ACT files that do not say their rate
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


def _si(values: np.ndarray, guess: UnitsGuess) -> np.ndarray:
    return convert(values, guess.units, "si")


def check_rate(fps: float, n_frames: int, physics_hz: float) -> None:
    """A replay of ``n_frames`` at ``fps`` [Hz]: a finite rate > 0 and at most the physics rate, and at most
    MAX_DURATION of simulated time (fps 0.001 would step the physics for hours a frame). DatasetError otherwise."""
    if not (np.isfinite(fps) and 0 < fps <= physics_hz):
        raise DatasetError(f"the dataset's fps is {fps:g}; a replay needs a rate in (0, {physics_hz:g}] Hz (the "
                           "scene's physics rate)")
    if n_frames / fps > MAX_DURATION:
        raise DatasetError(f"the episode's {n_frames} frames at {fps:g} Hz last {n_frames / fps:.4g} s; a replay "
                           f"simulates at most {MAX_DURATION:g} s")


def _steps_per_frame(n_frames: int, fps: float, physics_hz: float) -> np.ndarray:
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


def replay_episode(robot: Robot, scene, dataset: RecordedDataset, episode: int, guess: UnitsGuess, source: str,
                   ee_link: str, physics_hz: float, position_gain: float = POSITION_GAIN) -> Replay:
    """Play ``dataset.episodes[episode]``'s ``source`` ("action" or "state") through ``robot``'s motors.

    Frame k's command is where the joints should be at the frame's end: over its physics steps the motor
    target ramps from the previous command (the recorded start state for k = 0) to it, each step given the
    ramp's position at the step's start and its velocity as feed-forward (PyBullet's motor then lands on the
    ramp; the target at the step's end would lag one step)."""
    record = dataset.episodes[episode]
    names = dataset.action_names if source == "action" else dataset.state_names
    dof_map = map_to_robot(list(names), list(robot.model.dof_names))
    q_cmd = _si(record.action if source == "action" else record.state, guess)[:, dof_map.columns]
    state = _si(record.state, guess)[:, dof_map.columns] if len(record.state) else q_cmd
    steps = _steps_per_frame(len(q_cmd), dataset.fps, physics_hz)
    lo, hi = robot.model.q_lower[dof_map.dofs], robot.model.q_upper[dof_map.dofs]
    v_max = robot.model.v_max[dof_map.dofs]
    robot.set_qpos(np.clip(state[0], lo, hi), dof_map.dofs)
    q_sim, after, contacts = np.empty_like(q_cmd), np.empty_like(q_cmd), np.zeros(len(q_cmd), dtype=int)
    previous = state[0]
    for k in range(len(q_cmd)):
        q_sim[k] = robot.read_states()[0][0, dof_map.dofs]
        qdot = (q_cmd[k] - previous) * dataset.fps
        for i in range(steps[k]):  # the target ramps from the last command to this one over the frame
            _command(robot, dof_map.dofs, previous + i / steps[k] * (q_cmd[k] - previous), qdot, position_gain,
                     1.0 / physics_hz)
            scene.step()
        previous = q_cmd[k]
        after[k] = robot.read_states()[0][0, dof_map.dofs]
        contacts[k] = sum(len(links) for links in robot.contact_links(0).values())
    arm = np.flatnonzero(~np.isin(dof_map.columns % 7, [6]))
    ee = robot.model.link_index(ee_link)
    ee_pos = _ee(robot, ee, q_sim, dof_map)
    return Replay(t=np.arange(len(q_cmd)) / dataset.fps, q_cmd=q_cmd, q_sim=q_sim,
                  tracking_err=np.abs(after - q_cmd)[:, arm].max(axis=1),
                  limit_excess=np.maximum(np.maximum(lo - q_cmd, q_cmd - hi), 0).max(axis=1),
                  velocity_excess=np.maximum(np.abs(np.diff(np.vstack([state[:1], q_cmd]), axis=0)) * dataset.fps
                                             - v_max, 0).max(axis=1), contacts=contacts, ee_pos=ee_pos,
                  ee_gap=np.linalg.norm(ee_pos - _ee(robot, ee, state, dof_map), axis=1))


def panel_labels(names: list[str], dof_names: list[str]) -> list[str]:
    """One label per panel of replay.png: the robot DOF it shows and the dataset column that drives it (two
    fingers driven by one gripper column are two panels with one column)."""
    m = map_to_robot(names, dof_names)
    return [f"{dof_names[d]}\n({names[c]})" for c, d in zip(m.columns, m.dofs)]


def _plot(path: Path, result: Replay, names: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(names), 1, figsize=(8, 1.4 * len(names)), sharex=True)
    for ax, k, name in zip(np.atleast_1d(axes), range(len(names)), names):
        ax.plot(result.t, result.q_cmd[:, k], label="commanded")
        ax.plot(result.t, result.q_sim[:, k], "--", label="simulated")
        ax.set_ylabel(name, fontsize=7)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    np.atleast_1d(axes)[-1].set_xlabel("t [s]")
    save_figure_atomic(fig, path)
    plt.close(fig)


def _summary(result: Replay) -> dict:
    return {"frames": len(result.t), "tracking_err_max_rad": float(result.tracking_err.max()),
            "limit_excess_max": float(result.limit_excess.max()),
            "velocity_excess_max": float(result.velocity_excess.max()),
            "frames_with_contacts": int((result.contacts > 0).sum()),
            "ee_gap_max_m": float(result.ee_gap.max()) if len(result.ee_gap) else None,
            "ee_start_m": result.ee_pos[0].tolist(), "ee_end_m": result.ee_pos[-1].tolist()}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.replay", description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("dataset", help="a LeRobot dataset folder (v3.0, v2.1) or ACT HDF5 file/folder")
    parser.add_argument("--episode", type=int, default=0, help="episode index (default 0)")
    parser.add_argument("--units", choices=("si", "trossen", "auto"), default="auto",
                        help="si: rad and m; trossen: deg and m x 10000; auto: from the value ranges (default)")
    parser.add_argument("--source", choices=("action", "state"), default="action", help="what to play")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help=f"run config naming the scene ({DEFAULT_CONFIG})")
    parser.add_argument("--act-fps", type=float, default=50.0, help="rate of ACT files that do not say theirs")
    parser.add_argument("--out", default="videos/replay", help="folder for replay.json and replay.png")
    return parser.parse_args(argv)


def _main(args: argparse.Namespace) -> int:
    if not (np.isfinite(args.act_fps) and 0 < args.act_fps <= MAX_ACT_FPS):
        raise DatasetError(f"--act-fps must be a rate in (0, {MAX_ACT_FPS:g}] Hz, got {args.act_fps:g}")
    dataset = load_dataset(args.dataset, act_fps=args.act_fps)
    if not dataset.episodes:
        raise DatasetError(f"--episode {args.episode}: the dataset has no episodes", str(args.dataset))
    if not 0 <= args.episode < len(dataset.episodes):
        raise DatasetError(f"--episode {args.episode}: the dataset has episodes 0..{len(dataset.episodes) - 1}")
    guess = dataset_units(dataset) if args.units == "auto" else UnitsGuess(args.units, "given by --units")
    run = load_run_config(args.config, n_envs=1)
    record = dataset.episodes[args.episode]
    check_rate(dataset.fps, len(record.action), run.scene_config.physics_hz)
    for what, values in (("action", record.action), ("state", record.state)):
        bad = np.flatnonzero(~np.isfinite(values).all(axis=1)) if len(values) else []
        if len(bad):
            raise DatasetError(f"episode {args.episode}'s {what} holds NaN or inf (row {bad[0]})", str(args.dataset))
    scene, robot = build_scene(run)
    try:
        result = replay_episode(robot, scene, dataset, args.episode, guess, args.source,
                                run.scene_config.robot.ee_link, run.scene_config.physics_hz)
    finally:
        scene.close()
    log.info("units: %s (%s)", guess.units, guess.reason)  # once the episode replayed: nothing said before a refusal
    out = Path(args.out)
    summary = _summary(result)
    names = list(dataset.action_names if args.source == "action" else dataset.state_names)
    write_json_atomic(out / "replay.json", {"dataset": str(args.dataset), "format": dataset.format,
                                            "episode": args.episode, "source": args.source, "fps": dataset.fps,
                                            "units": guess._asdict(), "summary": summary,
                                            "per_frame": result._asdict()})
    _plot(out / "replay.png", result, panel_labels(names, list(robot.model.dof_names)))
    for key, value in summary.items():
        log.info("%s: %s", key, value)
    return 0


def main(argv: list[str] | None = None) -> int:
    return command_main(parse_args, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
