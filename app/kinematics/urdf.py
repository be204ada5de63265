"""URDF text -> a kinematic tree of joints and links.

Pure Python/numpy: knows nothing about any simulator. The kinematic model needs no meshes,
so parsing never looks for them (app.kinematics.description resolves them for the loaders
of geometry, and expands xacro files).

Joint windows, the one truth the model, the IK and the simulator share: revolute and
prismatic joints take ``<limit lower upper>``, unlimited where the pair is missing or
lower > upper (as PyBullet reads them); continuous joints are unlimited unless their
``<limit>`` carries lower <= upper, which PyBullet enforces and so do we. ``floating`` and
``planar`` joints are held fixed, as PyBullet holds them (a mobile base stays put).
"""

from __future__ import annotations

import logging
import math
import os
import posixpath
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from app.errors import URDFError
from app.kinematics.description import read_description

log = logging.getLogger(__name__)

SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
HELD_JOINT_TYPES = ("floating", "planar")  # loaded as fixed joints, as PyBullet does
MOVABLE_JOINT_TYPES = ("revolute", "continuous", "prismatic")
MAX_LINKS = 512  # links in one robot (kinematic tables and PyBullet bodies grow with them)


@dataclass(frozen=True)
class Mimic:
    """A URDF ``<mimic>`` tag: q = multiplier * q[joint] + offset (recorded, not enforced)."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class JointSpec:
    """One URDF joint. Lengths in [m], angles in [rad], velocities in [rad/s] or [m/s]."""

    name: str
    type: str
    parent: str
    child: str
    origin_xyz: tuple[float, float, float]
    origin_rpy: tuple[float, float, float]
    axis: tuple[float, float, float]
    lower: float
    upper: float
    velocity: float
    effort: float
    mimic: Mimic | None = None

    @property
    def movable(self) -> bool:
        return self.type in MOVABLE_JOINT_TYPES


@dataclass(frozen=True)
class URDFSpec:
    """A parsed robot: links in depth-first order from the root, one joint per non-root link.

    Attributes:
        name: The robot's name attribute.
        links: Link names, root first, each parent before its children.
        joints: ``joints[i]`` is the joint whose child is ``links[i + 1]``.
        path: The file it came from, if any.
    """

    name: str
    links: tuple[str, ...]
    joints: tuple[JointSpec, ...]
    path: str | None = None


def _floats(text: str | None, default: tuple[float, ...], what: str, path: str | None) -> tuple:
    if text is None:
        return default
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        raise URDFError(f"{what} must be numbers, got {text!r}", path) from None
    if len(values) != len(default):
        raise URDFError(f"{what} needs {len(default)} numbers, got {text!r}", path)
    if not all(math.isfinite(v) for v in values):
        raise URDFError(f"{what} must be finite numbers, got {text!r}", path)
    return values


def _check_link(elem: ET.Element, path: str | None) -> None:
    """A link's mass and inertia finite, mass and principal moments >= 0; its meshes inside their package."""
    name = elem.get("name")
    mass, inertia = elem.find("inertial/mass"), elem.find("inertial/inertia")
    try:
        m = float(mass.get("value", "0")) if mass is not None else 0.0
        moments = {k: float(inertia.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")} \
            if inertia is not None else {}
    except ValueError:
        raise URDFError(f"link '{name}': <inertial> values must be numbers", path) from None
    if not (math.isfinite(m) and m >= 0):
        raise URDFError(f"link '{name}': mass must be a finite number >= 0 kg, got {m}", path)
    for k, v in moments.items():
        if not math.isfinite(v) or (k in ("ixx", "iyy", "izz") and v < 0):
            raise URDFError(f"link '{name}': inertia {k} must be a finite number" +
                            (" >= 0 kg m^2" if k in ("ixx", "iyy", "izz") else "") + f", got {v}", path)
    for mesh in elem.iter("mesh"):
        uri = mesh.get("filename", "")
        if uri.startswith("package://"):
            rest = uri[len("package://"):].lstrip("/").partition("/")[2]
            if posixpath.normpath(rest or ".").startswith("..") or posixpath.isabs(rest):
                raise URDFError(f"link '{name}': mesh '{uri}' leaves its package; meshes must be inside it", path)


def _limits(elem: ET.Element, jtype: str, name: str, path: str | None) -> tuple[float, ...]:
    lim = elem.find("limit")
    get = (lambda k, d: d) if lim is None else (lambda k, d: float(lim.get(k, d)))
    try:
        velocity, effort = get("velocity", math.inf), get("effort", math.inf)
        lower, upper = get("lower", math.nan), get("upper", math.nan)
    except ValueError:
        raise URDFError(f"joint '{name}': <limit> attributes must be numbers", path) from None
    given = [k for k in ("lower", "upper", "velocity", "effort") if lim is not None and k in lim.attrib]
    if any(math.isnan(get(k, 0.0)) for k in given):
        raise URDFError(f"joint '{name}': <limit> {[f'{k}={lim.get(k)}' for k in given]} holds NaN; give numbers "
                        "(or leave an attribute out)", path)
    if not (velocity >= 0 and effort >= 0):
        raise URDFError(f"joint '{name}': <limit> velocity and effort must be >= 0 (or left out), got "
                        f"{velocity} and {effort}", path)
    if jtype == "fixed" or (jtype == "continuous" and not lower <= upper):
        return -math.inf, math.inf, velocity, effort
    if not (lower <= upper):  # missing, or lower > upper: PyBullet's "no limit"
        log.warning("joint '%s' in %s has no usable position limit; treating it as unlimited", name, path)
        lower, upper = -math.inf, math.inf
    elif jtype == "continuous":
        log.info("continuous joint '%s' in %s carries limits [%g, %g]; enforced, as PyBullet does",
                 name, path, lower, upper)
    return lower, upper, velocity, effort


def _parse_joint(elem: ET.Element, path: str | None) -> JointSpec:
    name = elem.get("name")
    jtype = elem.get("type")
    if not name or not jtype:
        raise URDFError("a <joint> lacks its name or type attribute", path)
    if jtype not in SUPPORTED_JOINT_TYPES:
        raise URDFError(
            f"joint '{name}' has type '{jtype}', which is not supported; "
            f"supported types: {list(SUPPORTED_JOINT_TYPES)}",
            path,
        )
    if jtype in HELD_JOINT_TYPES:
        log.warning("joint '%s' in %s is %s; held fixed, as PyBullet does", name, path, jtype)
        jtype = "fixed"
    parent, child = elem.find("parent"), elem.find("child")
    if parent is None or child is None or not parent.get("link") or not child.get("link"):
        raise URDFError(f"joint '{name}' needs <parent link=...> and <child link=...>", path)
    origin = elem.find("origin")
    xyz = _floats(None if origin is None else origin.get("xyz"), (0.0,) * 3, f"joint '{name}' origin xyz", path)
    rpy = _floats(None if origin is None else origin.get("rpy"), (0.0,) * 3, f"joint '{name}' origin rpy", path)
    axis_el = elem.find("axis")
    axis = np.array(_floats(None if axis_el is None else axis_el.get("xyz"), (1.0, 0.0, 0.0), f"joint '{name}' axis", path))
    if jtype != "fixed":
        norm = np.linalg.norm(axis)
        if not norm > 0:
            raise URDFError(f"joint '{name}' has a zero axis", path)
        axis = axis / norm
    mimic_el = elem.find("mimic")
    mimic = None
    if mimic_el is not None and mimic_el.get("joint"):
        mimic = Mimic(mimic_el.get("joint"), float(mimic_el.get("multiplier", 1.0)), float(mimic_el.get("offset", 0.0)))
    lower, upper, velocity, effort = _limits(elem, jtype, name, path)
    return JointSpec(name, jtype, parent.get("link"), child.get("link"), xyz, rpy,
                     tuple(axis.tolist()), lower, upper, velocity, effort, mimic)


def _order_tree(names: list[str], joints: list[JointSpec], path: str | None) -> tuple[tuple[str, ...], tuple[JointSpec, ...]]:
    by_child = {}
    for j in joints:
        for end in (j.parent, j.child):
            if end not in names:
                raise URDFError(f"joint '{j.name}' refers to link '{end}', which is not defined", path)
        if j.child in by_child:
            raise URDFError(f"link '{j.child}' is the child of two joints ('{by_child[j.child].name}', '{j.name}')", path)
        by_child[j.child] = j
    roots = [n for n in names if n not in by_child]
    if len(roots) != 1:
        raise URDFError(f"a URDF must have exactly one root link; found {roots or 'none (a loop)'}", path)
    children: dict[str, list[JointSpec]] = {n: [] for n in names}
    for j in joints:
        children[j.parent].append(j)
    order, stack = [], [roots[0]]
    while stack:  # depth first, children in file order
        link = stack.pop()
        order.append(link)
        stack.extend(j.child for j in reversed(children[link]))
    if len(order) != len(names):
        raise URDFError("the links do not form one tree (a loop or a detached link)", path)
    return tuple(order), tuple(by_child[n] for n in order[1:])


def parse_urdf_string(text: str, path: str | None = None) -> URDFSpec:
    """Parse URDF XML text. Raises URDFError on malformed XML or unsupported content."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"malformed XML: {exc}", path) from None
    if root.tag != "robot":
        raise URDFError(f"the root element is <{root.tag}>, expected <robot>", path)
    names = [el.get("name") for el in root.findall("link")]
    if not names or any(not n for n in names):
        raise URDFError("a URDF needs at least one <link name=...>", path)
    if len(names) > MAX_LINKS:
        raise URDFError(f"{len(names)} links, more than this app handles (MAX_LINKS = {MAX_LINKS} in "
                        "app/kinematics/urdf.py; raise it there for a larger robot)", path)
    for el in root.findall("link"):
        _check_link(el, path)
    joints = [_parse_joint(el, path) for el in root.findall("joint")]
    links, joints_sorted = _order_tree(names, joints, path)
    return URDFSpec(root.get("name", ""), links, joints_sorted, path)


def parse_urdf(path: str | os.PathLike, package_dirs=None, xacro_args=None) -> URDFSpec:
    """Parse a URDF (or ``.xacro``) file. Raises URDFError if it is missing or invalid."""
    return read_robot(path, package_dirs, xacro_args).spec


class RobotDescription(NamedTuple):
    """A robot description read and parsed once, for everything a run builds from it (the config's checks, the
    controllers' model, the simulator's bodies): its URDF text (xacro expanded, or a composed rig) and its tree."""

    text: str
    spec: URDFSpec


def read_robot(path: str | os.PathLike, package_dirs=None, xacro_args=None) -> RobotDescription:
    """The text and tree of a URDF (or ``.xacro``) file. Raises URDFError if it is missing or invalid."""
    text = read_description(path, package_dirs, xacro_args)
    return RobotDescription(text, parse_urdf_string(text, str(path)))
