"""Load a URDF (or xacro) robot into PyBullet as ROS tools read it; name <-> index maps.

PyBullet cannot resolve ROS package URIs nor expand xacro, so the description is rewritten
into a temporary copy first (app.kinematics.description.geometry_urdf): absolute mesh paths,
extension blocks dropped, joint limits exactly the kinematic model's. A missing mesh is a
MeshNotFoundError naming every path tried (PyBullet itself would only print a warning and
load a body without it). After loading, PyBullet's joint windows are checked against the model's.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pybullet as pb

from app.errors import URDFError
from app.kinematics.description import geometry_urdf, read_description
from app.kinematics.model import KinematicModel
from app.kinematics.rotations import wxyz_to_xyzw
from app.kinematics.urdf import parse_urdf_string
from app.runtime.leftovers import remove_stale


@dataclass(frozen=True)
class LoadedBody:
    """A body in a PyBullet client and its names.

    Attributes:
        body_id: PyBullet body unique id.
        link_index: URDF link name -> PyBullet link index (-1 for the base link).
        joint_index: Movable joint name -> PyBullet joint index.
    """

    body_id: int
    link_index: dict[str, int]
    joint_index: dict[str, int]


@contextlib.contextmanager
def simulator_file(model: KinematicModel, text: str, path: str, package_dirs: Sequence[str] | None) -> Iterator[str]:
    """A temporary URDF file PyBullet can load (see the module docstring); removed on exit."""
    limits = {name: (float(lo), float(hi)) for name, lo, hi in zip(model.dof_names, model.q_lower, model.q_upper)}
    resolved = geometry_urdf(text, path, list(package_dirs or []), limits)
    remove_stale(Path(tempfile.gettempdir()), f"{PREFIX}*.urdf", STALE_AFTER)  # what a killed process left
    fd, tmp = tempfile.mkstemp(suffix=".urdf", prefix=PREFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(resolved)
        yield tmp
    finally:
        os.unlink(tmp)


PREFIX = "app_resolved_"  # the temporary copies, in the system's temp folder
STALE_AFTER = 3600.0  # [s]: a copy this old was left by a killed process (a load takes a second)


def load_body(client: int, file: str, path: str, model: KinematicModel, base_pos: Sequence[float] = (0.0, 0.0, 0.0),
              base_quat: Sequence[float] = (1.0, 0.0, 0.0, 0.0), fixed_base: bool = True, flags: int = 0) -> LoadedBody:
    """Load a prepared ``file`` (from :func:`simulator_file` of ``path``); ``base_quat`` is (w, x, y, z)."""
    try:
        body = pb.loadURDF(file, list(base_pos), list(wxyz_to_xyzw(base_quat)),
                           useFixedBase=fixed_base, flags=flags, physicsClientId=client)
    except pb.error as exc:
        raise URDFError(f"PyBullet could not load it: {exc}", path) from None
    link_index, joint_index = {pb.getBodyInfo(body, physicsClientId=client)[0].decode(): -1}, {}
    windows = {}
    for j in range(pb.getNumJoints(body, physicsClientId=client)):
        info = pb.getJointInfo(body, j, physicsClientId=client)
        link_index[info[12].decode()] = j
        if info[2] in (pb.JOINT_REVOLUTE, pb.JOINT_PRISMATIC):
            joint_index[info[1].decode()] = j
            windows[info[1].decode()] = (info[8], info[9])
    _check_windows(model, windows, path)
    return LoadedBody(body, link_index, joint_index)


def _check_windows(model: KinematicModel, windows: Mapping[str, tuple[float, float]], path: str) -> None:
    """PyBullet's joint windows (lower > upper: none) must be the model's."""
    for name, lo, hi in zip(model.dof_names, model.q_lower, model.q_upper):
        if name not in windows:
            raise URDFError(f"PyBullet loaded no movable joint '{name}'", path)
        pb_lo, pb_hi = windows[name]
        pb_window = (pb_lo, pb_hi) if pb_lo <= pb_hi else (-math.inf, math.inf)
        if not all(a == b or abs(a - b) <= 1e-9 for a, b in zip(pb_window, (lo, hi))):
            raise URDFError(f"joint '{name}': PyBullet enforces {pb_window}, the model {(lo, hi)}", path)


def load_urdf(client: int, path: str, package_dirs: Sequence[str] | None = None,
              base_pos: Sequence[float] = (0.0, 0.0, 0.0), base_quat: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
              fixed_base: bool = True, flags: int = 0, xacro_args: Mapping[str, object] | None = None) -> LoadedBody:
    """Load ``path`` (URDF or xacro) into ``client``; ``base_quat`` is (w, x, y, z).

    Raises:
        URDFError: missing or malformed file, or PyBullet refused it.
        MeshNotFoundError: a mesh could not be found (lists the paths tried).
    """
    path = str(path)
    text = read_description(path, package_dirs, xacro_args)
    model = KinematicModel(parse_urdf_string(text, path))
    with simulator_file(model, text, path, package_dirs) as file:
        return load_body(client, file, path, model, base_pos, base_quat, fixed_base, flags)
