"""Several robot descriptions as one articulated rig: each robot's links and joints named ``NAME/...`` and its
root fixed to a common root link at its mount pose.

This is how a scene of several arms (two WidowX AI across a table, as Trossen's Stationary AI kit mounts them)
becomes one model with one DOF vector: the rig is kinematically the same as a one-file description of the same
robots at the same poses (the Stationary AI's own URDF), so both run through one IK, one QP and one report.
Each robot's meshes are resolved against its own file first (absolute paths), so the rig's text stands alone.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from app.errors import URDFError
from app.kinematics.description import add_frame_inertial, geometry_urdf, read_description
from app.kinematics.model import KinematicModel
from app.kinematics.rotations import matrix_to_rpy, quat_normalize, quat_to_matrix
from app.kinematics.urdf import parse_urdf_string

ROOT_LINK = "rig_root"
SEPARATOR = "/"


class RobotPart(NamedTuple):
    """One robot of a rig. ``base_pos`` [m] (3,) and ``base_quat`` (w, x, y, z): its root in the rig's frame."""

    name: str
    urdf: str
    base_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    package_dirs: tuple[str, ...] = ()
    xacro_args: Mapping[str, object] | None = None


def check_part_names(names: Sequence[str]) -> str | None:
    """Why ``names`` cannot name a rig's robots (None when they can)."""
    if not names:
        return "a rig needs at least one robot"
    for name in names:
        if not isinstance(name, str) or not name or SEPARATOR in name or not name.isprintable() or name.strip() != name:
            return f"robot names must be non-empty printable text without '{SEPARATOR}' or spaces around, got {name!r}"
    twice = sorted({n for n in names if list(names).count(n) > 1})
    return f"robot name(s) {twice} used twice: each robot needs its own" if twice else None


def compose_urdf(parts: Sequence[RobotPart], name: str = "rig") -> str:
    """URDF text of the rig (meshes as absolute paths, one element per line).

    Raises:
        URDFError: a part's description is invalid or two parts share a name; MeshNotFoundError: a mesh is missing.
    """
    problem = check_part_names([p.name for p in parts])
    if problem:
        raise URDFError(problem, ", ".join(p.urdf for p in parts))
    rig = ET.Element("robot", {"name": name})
    root = ET.SubElement(rig, "link", {"name": ROOT_LINK})
    add_frame_inertial(root)
    for part in parts:
        element, part_root = _prefixed(part)
        for child in element:
            rig.append(child)
        _mount(rig, part, part_root)
    ET.indent(rig)
    return ET.tostring(rig, encoding="unicode") + "\n"


def _prefixed(part: RobotPart) -> tuple[ET.Element, str]:
    """The part's resolved description with every link, joint and material named ``name/...``; its root link."""
    text = read_description(part.urdf, part.package_dirs, part.xacro_args)
    model = KinematicModel(parse_urdf_string(text, part.urdf))
    limits = {n: (float(lo), float(hi)) for n, lo, hi in zip(model.dof_names, model.q_lower, model.q_upper)}
    element = ET.fromstring(geometry_urdf(text, part.urdf, list(part.package_dirs), limits))
    prefix = part.name + SEPARATOR
    for node in element.iter():
        if node.tag in ("link", "joint") and node is not element:
            node.set("name", prefix + node.get("name", ""))
        elif node.tag in ("parent", "child"):
            node.set("link", prefix + node.get("link", ""))
        elif node.tag == "mimic":
            node.set("joint", prefix + node.get("joint", ""))
        elif node.tag == "material" and node.get("name"):
            node.set("name", prefix + node.get("name"))
    return element, prefix + model.link_names[0]


def _mount(rig: ET.Element, part: RobotPart, part_root: str) -> None:
    """The fixed joint from the rig's root to ``part_root`` at the part's base pose."""
    joint = ET.SubElement(rig, "joint", {"name": f"{part.name}{SEPARATOR}mount_joint", "type": "fixed"})
    xyz = " ".join(repr(float(x)) for x in part.base_pos)
    rpy = " ".join(repr(float(a)) for a in matrix_to_rpy(quat_to_matrix(quat_normalize(np.asarray(part.base_quat, dtype=float)))))
    ET.SubElement(joint, "origin", {"xyz": xyz, "rpy": rpy})
    ET.SubElement(joint, "parent", {"link": ROOT_LINK})
    ET.SubElement(joint, "child", {"link": part_root})
