"""Robot descriptions as ROS tools read them: xacro expansion, package lookup, mesh URIs.

Pure Python: knows nothing about any simulator. :func:`read_description` turns a ``.urdf`` or
``.urdf.xacro`` file into URDF text (the kinematic parser needs nothing else);
:func:`geometry_urdf` prepares that text for a loader of geometry: only ``<mesh filename>``
inside ``<visual>``/``<collision>`` is resolved and checked (textures where found),
extension blocks (``<gazebo>``, ``<transmission>``, ``<ros2_control>``, ...) are dropped, the
joint limits are written as the kinematic model reads them, so that a simulator enforces the
same window the model and the IK use, and links without ``<inertial>`` (frames such as
``tool0``) get a negligible one (PyBullet would give them 1 kg).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from app.errors import MeshNotFoundError, URDFError

log = logging.getLogger(__name__)

URDF_ELEMENTS = ("link", "joint", "material")  # what a URDF loader reads under <robot>; the rest is extensions
MESH_FORMATS = (".obj", ".stl", ".dae")  # what PyBullet's URDF importer loads (case-insensitive)
XACRO_EXTRA = 'the optional extra "ros": pip install -e ".[ros]" (the xacro package from PyPI)'


def package_search_dirs(package_dirs: Sequence[str] | None) -> list[str]:
    """The given package directories followed by ``ROS_PACKAGE_PATH`` entries."""
    dirs = [str(d) for d in (package_dirs or [])]
    dirs += [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    return dirs


def find_package(package: str, base_dir: str, package_dirs: Sequence[str] | None) -> list[str]:
    """Folders that may be ROS package ``package``, in the order tried (they need not exist)."""
    cands = []
    for d in package_search_dirs(package_dirs):
        cands.append(os.path.join(d, package))
        if Path(d).name == package:
            cands.append(d)
    # A ROS layout keeps the URDF inside its package (pkg/urdf/robot.urdf): look up the tree.
    for parent in Path(base_dir).resolve().parents:
        if parent.name == package:
            cands.append(str(parent))
            break
    cands.append(os.path.join(base_dir, package))  # PyBullet's convention for its bundled robots
    return cands


def resolve_uri(uri: str, base_dir: str, package_dirs: Sequence[str] | None = None) -> str:
    """Absolute path of a file URI: ``package://NAME/rest`` (also ``package:///NAME/rest``),
    ``file://``, absolute, or relative to ``base_dir``.

    ``package://NAME/rest`` is looked for as ``DIR/NAME/rest`` in each package dir and
    ``ROS_PACKAGE_PATH`` entry (or ``DIR/rest`` when DIR is named NAME), then in an enclosing
    folder named NAME, then relative to ``base_dir`` as PyBullet does.

    Raises:
        MeshNotFoundError: naming every path tried.
    """
    if uri.startswith("package://"):
        package, _, rest = uri[len("package://"):].lstrip("/").partition("/")
        tried = [os.path.join(d, rest) for d in find_package(package, base_dir, package_dirs)]
        tried.append(os.path.join(base_dir, rest))
    else:
        plain = uri[len("file://"):] if uri.startswith("file://") else uri
        tried = [plain if os.path.isabs(plain) else os.path.join(base_dir, plain)]
    for cand in tried:
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    raise MeshNotFoundError(uri, tried)


@contextlib.contextmanager
def _xacro_find(base_dir: str, package_dirs: Sequence[str] | None) -> Iterator[list[str]]:
    """``$(find pkg)`` looked up in our package dirs (the PyPI xacro asks a ROS install otherwise); yields
    the list where failed look-ups are described (xacro wraps the exception in its own)."""
    from xacro import substitution_args

    failures: list[str] = []

    def find(package: str) -> str:
        cands = find_package(package, base_dir, package_dirs)
        for cand in cands:
            if os.path.isdir(cand):
                return os.path.abspath(cand)
        failures.append(f"$(find {package}): package not found; tried: {', '.join(cands)} "
                        "(give package_dirs or set ROS_PACKAGE_PATH)")
        raise LookupError(failures[-1])

    original = substitution_args._eval_find
    substitution_args._eval_find = find
    try:
        yield failures
    finally:
        substitution_args._eval_find = original


def expand_xacro(path: str, package_dirs: Sequence[str] | None = None,
                 args: Mapping[str, object] | None = None) -> str:
    """URDF text of a ``.xacro`` file; ``args`` are its ``$(arg ...)`` values.

    Raises:
        URDFError: the xacro package is missing (names the extra), or expansion failed.
    """
    try:
        import xacro
    except ImportError:
        raise URDFError(f"expanding xacro files needs {XACRO_EXTRA}", path) from None
    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    declared = set(re.findall(r"<xacro:arg\s+name=[\"']([^\"']+)", source))
    unknown = sorted(set(mappings) - declared - set(re.findall(r"\$\(arg\s+([^)\s]+)\s*\)", source)))
    if unknown:
        log.warning("%s: xacro_args %s are not declared by <xacro:arg> in this file (declared: %s); xacro ignores "
                    "unknown ones", path, unknown, sorted(declared))
    with _xacro_find(os.path.dirname(os.path.abspath(path)), package_dirs) as failures:
        try:
            doc = xacro.process_file(path, mappings=mappings)
        except Exception as exc:  # xacro raises its own classes, NameError, XML and OS errors
            reason = failures[0] if failures else _missing_args(str(exc), source, mappings) or \
                f"xacro expansion failed: {type(exc).__name__}: {exc}"
            raise URDFError(reason, path) from None
    return doc.toxml()


def _missing_args(message: str, source: str, given: Mapping[str, str]) -> str | None:
    """The message for xacro's "Undefined substitution argument NAME": every ``$(arg X)`` of the file that is
    neither declared with a default nor given, and how to give them; None for other errors."""
    match = re.search(r"Undefined substitution argument (\S+)", message)
    if match is None:
        return None
    declared = set(re.findall(r"<xacro:arg\s+name=[\"']([^\"']+)[\"']\s+default=", source))
    used = set(re.findall(r"\$\(arg\s+([^)\s]+)\s*\)", source))
    missing = sorted({match.group(1)} | (used - declared - set(given)))
    return (f"xacro argument(s) {', '.join(missing)} needed but not given: pass them as xacro_args "
            f"(API: xacro_args={{{', '.join(repr(m) + ': ...' for m in missing)}}}; scene YAML: robot.xacro_args)")


def read_description(path: str | os.PathLike, package_dirs: Sequence[str] | None = None,
                     xacro_args: Mapping[str, object] | None = None) -> str:
    """URDF text of ``path`` (``*.xacro`` expanded). Raises URDFError if missing or unreadable."""
    path = str(path)
    if not os.path.isfile(path):
        raise URDFError("robot description not found", path)
    if path.endswith(".xacro"):
        return expand_xacro(path, package_dirs, xacro_args)
    if xacro_args:
        raise URDFError(f"xacro_args {sorted(xacro_args)} given for a file that is not .xacro", path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise URDFError(f"cannot read it: {exc}", path) from None
    return _substitute(text, path, package_dirs)


_SUBSTITUTION = re.compile(r"\$\((\w+)((?:\s+[^)\s]+)*)\s*\)")


def _substitute(text: str, path: str, package_dirs: Sequence[str] | None) -> str:
    """``$(env NAME)``, ``$(optenv NAME default...)`` and ``$(find pkg)`` left in the attributes of a plain
    URDF's links, joints and materials (some shipped ones, PyBullet's Husky among them, carry them) evaluated
    as roslaunch does; others there are an error. Comments and extension blocks are not looked at."""
    if "$(" not in text:
        return text
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"malformed XML: {exc}", path) from None
    base_dir = os.path.dirname(os.path.abspath(path))

    def value(match: re.Match) -> str:
        verb, args = match.group(1), match.group(2).split()
        if verb == "optenv" and args:
            return os.environ.get(args[0], " ".join(args[1:]))
        if verb == "env" and len(args) == 1 and args[0] in os.environ:
            return os.environ[args[0]]
        if verb == "find" and len(args) == 1:
            for cand in find_package(args[0], base_dir, package_dirs):
                if os.path.isdir(cand):
                    return os.path.abspath(cand)
        raise URDFError(f"cannot evaluate {match.group(0)!r} in a plain URDF (env: variable unset; find: package "
                        f"not found; others need xacro: give the .xacro source instead)", path)

    for child in root:
        if child.tag not in URDF_ELEMENTS:
            continue
        for el in child.iter():
            for key, attr in el.attrib.items():
                if "$(" in attr:
                    el.set(key, _SUBSTITUTION.sub(value, attr))
    return ET.tostring(root, encoding="unicode")


def _resolve_geometry(root: ET.Element, urdf_path: str, base_dir: str, package_dirs: Sequence[str] | None) -> None:
    """Mesh filenames of visual and collision geometry made absolute and checked; textures where found."""
    for link in root.findall("link"):
        for kind in ("visual", "collision"):
            for mesh in link.findall(f"{kind}/geometry/mesh"):
                uri = mesh.get("filename", "")
                try:
                    resolved = resolve_uri(uri, base_dir, package_dirs)
                except MeshNotFoundError as exc:
                    raise MeshNotFoundError(exc.uri, exc.tried, urdf_path) from None
                if Path(resolved).suffix.lower() not in MESH_FORMATS:
                    raise URDFError(f"link '{link.get('name')}': {kind} mesh '{uri}' is a "
                                    f"{Path(resolved).suffix or 'extension-less'} file, which PyBullet cannot load; "
                                    f"convert it to one of {list(MESH_FORMATS)} (e.g. with trimesh or Blender)",
                                    urdf_path)
                mesh.set("filename", resolved)
    for texture in root.iter("texture"):
        try:
            texture.set("filename", resolve_uri(texture.get("filename", ""), base_dir, package_dirs))
        except MeshNotFoundError as exc:
            log.warning("%s: texture '%s' not found (tried %s); loading without it", urdf_path, exc.uri, exc.tried)
            texture.attrib.pop("filename", None)


def _write_limits(root: ET.Element, limits: Mapping[str, tuple[float, float]]) -> None:
    """Each movable joint's ``<limit>`` holds exactly the model's window (none where unlimited)."""
    for joint in root.findall("joint"):
        window = limits.get(joint.get("name", ""))
        if window is None:
            continue
        lim = joint.find("limit")
        if lim is None:
            lim = ET.SubElement(joint, "limit", {"effort": "0", "velocity": "0"})
        lower, upper = window
        for key in ("lower", "upper"):
            lim.attrib.pop(key, None)
        if lower > -float("inf") and upper < float("inf"):
            lim.set("lower", repr(float(lower)))
            lim.set("upper", repr(float(upper)))


def geometry_urdf(text: str, urdf_path: str, package_dirs: Sequence[str] | None,
                  limits: Mapping[str, tuple[float, float]]) -> str:
    """URDF text for a geometry loader (see the module docstring).

    Args:
        text: URDF text (xacro already expanded). urdf_path: Where it came from (relative URIs).
        package_dirs: Where ``package://`` packages live, before ``ROS_PACKAGE_PATH``.
        limits: Movable joint name -> (lower, upper) as the kinematic model has them (+-inf: none).
    Raises:
        MeshNotFoundError: a mesh cannot be found (names the paths tried).
        URDFError: malformed XML, or a mesh format PyBullet cannot load.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"malformed XML: {exc}", urdf_path) from None
    for child in list(root):
        if child.tag not in URDF_ELEMENTS:
            root.remove(child)
    _resolve_geometry(root, urdf_path, os.path.dirname(os.path.abspath(urdf_path)), package_dirs)
    _write_limits(root, limits)
    for link in root.findall("link"):
        if link.find("inertial") is None:
            add_frame_inertial(link)
    ET.indent(root)  # one element per line: PyBullet's XML reader fails on one very long line (xacro's output)
    return ET.tostring(root, encoding="unicode") + "\n"


def add_frame_inertial(link: ET.Element) -> None:
    """0.1 g and a tiny inertia: a frame-only link weighs nothing a motor would notice."""
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "mass", {"value": "1e-4"})
    ET.SubElement(inertial, "inertia", {k: ("1e-9" if k in ("ixx", "iyy", "izz") else "0")
                                        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")})
