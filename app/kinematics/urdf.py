"""URDF text -> a kinematic tree of joints and links; ``package://`` resolution.

Pure Python/numpy: knows nothing about any simulator. The kinematic model needs
no meshes, so parsing never looks for them; :func:`resolve_mesh_uris` does, for the
adapters that load geometry.
"""

from __future__ import annotations

import logging
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.errors import MeshNotFoundError, URDFError

log = logging.getLogger(__name__)

SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
MOVABLE_JOINT_TYPES = ("revolute", "continuous", "prismatic")


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
    return values


def _limits(elem: ET.Element, jtype: str, name: str, path: str | None) -> tuple[float, ...]:
    lim = elem.find("limit")
    get = (lambda k, d: d) if lim is None else (lambda k, d: float(lim.get(k, d)))
    velocity, effort = get("velocity", math.inf), get("effort", math.inf)
    if jtype in ("continuous", "fixed"):
        return -math.inf, math.inf, velocity, effort
    lower, upper = get("lower", math.nan), get("upper", math.nan)
    if not (lower <= upper):  # missing, or lower > upper: PyBullet's "no limit"
        log.warning("joint '%s' in %s has no usable position limit; treating it as unlimited", name, path)
        lower, upper = -math.inf, math.inf
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
    joints = [_parse_joint(el, path) for el in root.findall("joint")]
    links, joints_sorted = _order_tree(names, joints, path)
    return URDFSpec(root.get("name", ""), links, joints_sorted, path)


def parse_urdf(path: str | os.PathLike) -> URDFSpec:
    """Parse a URDF file. Raises URDFError if it is missing or invalid."""
    path = str(path)
    if not os.path.isfile(path):
        raise URDFError("URDF file not found", path)
    with open(path, encoding="utf-8") as fh:
        return parse_urdf_string(fh.read(), path)


def package_search_dirs(package_dirs: list[str] | None) -> list[str]:
    """The given package directories followed by ``ROS_PACKAGE_PATH`` entries."""
    dirs = [str(d) for d in (package_dirs or [])]
    dirs += [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    return dirs


def _package_candidates(package: str, rest: str, base_dir: str, package_dirs: list[str] | None) -> list[str]:
    """Where ``package://package/rest`` may live, in the order tried."""
    cands = []
    for d in package_search_dirs(package_dirs):
        cands.append(os.path.join(d, package, rest))
        if Path(d).name == package:
            cands.append(os.path.join(d, rest))
    # A ROS layout keeps the URDF inside its package (pkg/urdf/robot.urdf): look up the tree.
    for parent in Path(base_dir).resolve().parents:
        if parent.name == package:
            cands.append(str(parent / rest))
            break
    # PyBullet's own convention (its bundled robots): the URI relative to the URDF's folder.
    cands += [os.path.join(base_dir, package, rest), os.path.join(base_dir, rest)]
    return cands


def resolve_uri(uri: str, base_dir: str, package_dirs: list[str] | None = None) -> str:
    """Absolute path of a mesh URI (``package://``, ``file://`` or relative to ``base_dir``).

    ``package://NAME/rest`` is looked for in each package dir (and ``ROS_PACKAGE_PATH``) as
    ``DIR/NAME/rest`` (or ``DIR/rest`` when DIR is named NAME), then in an enclosing folder
    named NAME, then relative to ``base_dir`` as PyBullet does.

    Raises:
        MeshNotFoundError: naming every path tried.
    """
    if uri.startswith("package://"):
        package, _, rest = uri[len("package://"):].partition("/")
        tried = _package_candidates(package, rest, base_dir, package_dirs)
    else:
        plain = uri[len("file://"):] if uri.startswith("file://") else uri
        tried = [plain if os.path.isabs(plain) else os.path.join(base_dir, plain)]
    for cand in tried:
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    raise MeshNotFoundError(uri, tried)


def resolve_mesh_uris(urdf_path: str, package_dirs: list[str] | None = None) -> str:
    """URDF text with every ``filename`` attribute replaced by an absolute path.

    Raises:
        URDFError: the file is missing or malformed.
        MeshNotFoundError: a mesh or texture cannot be found (names the paths tried).
    """
    spec_text = Path(urdf_path).read_text(encoding="utf-8") if os.path.isfile(urdf_path) else None
    if spec_text is None:
        raise URDFError("URDF file not found", urdf_path)
    try:
        root = ET.fromstring(spec_text)
    except ET.ParseError as exc:
        raise URDFError(f"malformed XML: {exc}", urdf_path) from None
    base_dir = os.path.dirname(os.path.abspath(urdf_path))
    for el in root.iter():
        uri = el.get("filename")
        if uri:
            try:
                el.set("filename", resolve_uri(uri, base_dir, package_dirs))
            except MeshNotFoundError as exc:
                raise MeshNotFoundError(exc.uri, exc.tried, urdf_path) from None
    return ET.tostring(root, encoding="unicode")
