"""A timed trajectory for the real Trossen arm: Trossen's joint names (``main_joint_0..6``, or ``left_/right_``),
speeds within the arm's published joint velocity limits times a safety factor, written as CSV or NPZ for a loop
that streams one row every 1 / rate seconds: ``driver.set_all_positions(position, 0.0, False, velocity,
acceleration)`` (goal time 0, non-blocking, feed-forward velocity and acceleration, as Trossen's demos do).

Units: joints 0-5 [rad], [rad/s], [rad/s^2]; joint 6 (the gripper, its carriage opening) [m], [m/s], [m/s^2].
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.dataset.joint_names import GRIPPER_SLOT, JOINTS_PER_ARM
from app.dataset.robot_map import robot_layout, values_from_dofs
from app.errors import InputError
from app.planning.timing import DEFAULT_ACCELERATION, DEFAULT_JERK, TimedTrajectory, time_parameterize

PUBLISHED_VELOCITY = (6.28, 6.28, 6.28, 9.42, 9.42, 9.42)  # [rad/s] Trossen's limits of joints 0-5
SAFETY = 0.5  # fraction of the published limits used by default
KINDS = ("position", "velocity", "acceleration")
STREAM = "driver.set_all_positions(position, 0.0, False, velocity, acceleration) every 1/rate s"


class DriverTrajectory(NamedTuple):
    """names (7 per arm); rate [Hz]; t (K,) [s]; position, velocity, acceleration (K, 7 per arm); units (per name:
    "rad" for joints 0-5, "m" for the gripper; velocities and accelerations per second and per second squared)."""

    names: tuple
    rate: float
    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    units: tuple


def driver_velocity_limits(model, safety: float = SAFETY) -> np.ndarray:
    """Per model DOF [rad/s or m/s]: min(URDF limit, published limit x ``safety``) for the arms' joints 0-5;
    the URDF's for the others (grippers). Shape (n_dofs,)."""
    if not (np.isfinite(safety) and 0 < safety <= 1):
        raise InputError(f"safety must be in (0, 1], got {safety}")
    _, dof_map = robot_layout(list(model.dof_names))
    limits = np.asarray(model.v_max, dtype=float).copy()
    for column, dof in zip(dof_map.columns, dof_map.dofs):
        slot = int(column) % JOINTS_PER_ARM
        if slot < GRIPPER_SLOT:
            limits[dof] = min(limits[dof], PUBLISHED_VELOCITY[slot] * safety)
    return limits


def time_for_driver(model, path: np.ndarray, a_max=DEFAULT_ACCELERATION, j_max=DEFAULT_JERK, rate: float = 200.0,
                    safety: float = SAFETY) -> TimedTrajectory:
    """A full-DOF path (N, n_dofs) timed within :func:`driver_velocity_limits` (see timing.time_parameterize)."""
    return time_parameterize(path, driver_velocity_limits(model, safety), a_max, j_max, rate)


def to_driver(model, traj: TimedTrajectory, safety: float = SAFETY) -> DriverTrajectory:
    """The trajectory (over the model's DOFs) in Trossen's layout. Raises InputError where a speed passes the
    published limit x ``safety``."""
    limits = driver_velocity_limits(model, safety)
    over = np.abs(traj.qd) > limits * (1 + 1e-9)
    if over.any():
        k = int(np.argwhere(over)[0][1])
        raise InputError(f"DOF {model.dof_names[k]} reaches {np.abs(traj.qd[:, k]).max():.4g}/s, above its limit "
                         f"{limits[k]:.4g}/s (published x {safety})")
    names, dof_map = robot_layout(list(model.dof_names))
    n = len(names)
    rows = [values_from_dofs(a, dof_map, n) for a in (traj.q, traj.qd, traj.qdd)]
    units = tuple("m" if i % JOINTS_PER_ARM == GRIPPER_SLOT else "rad" for i in range(n))
    return DriverTrajectory(tuple(names), traj.rate, traj.t.copy(), *rows, units)


def write_csv(traj: DriverTrajectory, path: str | Path) -> Path:
    """One header comment (rate, units, how to stream), then columns ``t`` and ``<kind>.<name>`` per kind."""
    path = Path(path)
    with path.open("w", newline="") as f:
        f.write(f"# rate_hz={traj.rate:g}; t [s]; units {dict(zip(traj.names, traj.units))} (velocity per s, "
                f"acceleration per s^2); stream: {STREAM}\n")
        w = csv.writer(f)
        w.writerow(["t"] + [f"{k}.{n}" for k in KINDS for n in traj.names])
        for i in range(len(traj.t)):
            w.writerow([repr(float(traj.t[i]))] + [repr(float(v)) for v in
                       np.concatenate([traj.position[i], traj.velocity[i], traj.acceleration[i]])])
    return path


def write_npz(traj: DriverTrajectory, path: str | Path) -> Path:
    """Arrays t, position, velocity, acceleration; names, units, rate and the streaming call beside them."""
    path = Path(path)
    np.savez(path, t=traj.t, position=traj.position, velocity=traj.velocity, acceleration=traj.acceleration,
             names=np.array(traj.names), units=np.array(traj.units), rate=np.array(traj.rate), stream=np.array(STREAM))
    return path


def read_trajectory(path: str | Path) -> DriverTrajectory:
    """A file written by write_csv or write_npz. Raises InputError for another layout."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path) as z:
            return DriverTrajectory(tuple(z["names"].tolist()), float(z["rate"]), z["t"], z["position"],
                                    z["velocity"], z["acceleration"], tuple(z["units"].tolist()))
    with path.open() as f:
        head = f.readline()
        if not head.startswith("# rate_hz="):
            raise InputError(f"{path}: not a trajectory written by app.planning.export (no '# rate_hz=' line)")
        rate = float(head[len("# rate_hz="):].split(";")[0])
        header, *rows = list(csv.reader(f))
    data = np.array(rows, dtype=float).reshape(-1, len(header))
    n = (len(header) - 1) // 3
    names = tuple(h.split(".", 1)[1] for h in header[1:n + 1])
    units = tuple("m" if i % JOINTS_PER_ARM == GRIPPER_SLOT else "rad" for i in range(n))
    return DriverTrajectory(names, rate, data[:, 0], data[:, 1:n + 1], data[:, n + 1:2 * n + 1],
                            data[:, 2 * n + 1:], units)
