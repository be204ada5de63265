"""Load a URDF into PyBullet with ``package://`` meshes resolved; name <-> index maps.

PyBullet cannot resolve ROS package URIs, so the file is rewritten with absolute mesh
paths into a temporary copy first; a missing mesh is a MeshNotFoundError naming every
path tried (PyBullet itself would only print a warning and load a body without it).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import pybullet as pb

from app.errors import URDFError
from app.kinematics.rotations import wxyz_to_xyzw
from app.kinematics.urdf import resolve_mesh_uris


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


def load_urdf(
    client: int,
    path: str,
    package_dirs: Sequence[str] | None = None,
    base_pos: Sequence[float] = (0.0, 0.0, 0.0),
    base_quat: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
    fixed_base: bool = True,
    flags: int = 0,
) -> LoadedBody:
    """Load ``path`` into ``client``; ``base_quat`` is (w, x, y, z).

    Raises:
        URDFError: missing or malformed file, or PyBullet refused it.
        MeshNotFoundError: a mesh could not be found (lists the paths tried).
    """
    text = resolve_mesh_uris(str(path), list(package_dirs or []))
    fd, tmp = tempfile.mkstemp(suffix=".urdf", prefix="app_resolved_")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            body = pb.loadURDF(tmp, list(base_pos), list(wxyz_to_xyzw(base_quat)),
                               useFixedBase=fixed_base, flags=flags, physicsClientId=client)
        except pb.error as exc:
            raise URDFError(f"PyBullet could not load it: {exc}", str(path)) from None
    finally:
        os.unlink(tmp)
    link_index, joint_index = {pb.getBodyInfo(body, physicsClientId=client)[0].decode(): -1}, {}
    for j in range(pb.getNumJoints(body, physicsClientId=client)):
        info = pb.getJointInfo(body, j, physicsClientId=client)
        link_index[info[12].decode()] = j
        if info[2] in (pb.JOINT_REVOLUTE, pb.JOINT_PRISMATIC):
            joint_index[info[1].decode()] = j
    return LoadedBody(body, link_index, joint_index)
