"""What an object's URDF file must hold before PyBullet loads it: every size, mass, inertia, origin and scale a
finite number of the right sign, and every mesh it names present (and, for STL/OBJ, readable:
app.collision.meshes.check_mesh_file). PyBullet loads a box of negative size or a NaN mass and simulates it, or
answers only "Cannot load URDF file." for a missing mesh; this names the element and the value instead."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

from app.collision.meshes import MESH_CHECKED, check_mesh_file
from app.errors import URDFError

POSITIVE = {"box": ("size",), "sphere": ("radius",), "cylinder": ("radius", "length"), "capsule": ("radius", "length"),
            "mesh": ("scale",)}  # attributes every value of which must be > 0
FINITE = {"origin": ("xyz", "rpy")}
NON_NEGATIVE = {"mass": ("value",), "inertia": ("ixx", "iyy", "izz")}
MAX_SIZE = 1e3  # [m]: a size, radius or length of an object


def check_object_urdf(path: str, what: str) -> None:
    """Raise URDFError naming ``path``, the element and the value where the object URDF ``path`` is not usable."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise URDFError(f"{what}: not a readable URDF ({exc})", path) from None
    for el in root.iter():
        for attr in POSITIVE.get(el.tag, ()):
            if attr in el.attrib or el.tag != "mesh":
                _numbers(el, attr, path, what, lambda x: 0 < x <= MAX_SIZE, f"numbers in (0, {MAX_SIZE:g}]")
        for attr in FINITE.get(el.tag, ()):
            if attr in el.attrib:
                _numbers(el, attr, path, what, lambda x: abs(x) <= 1e6, "finite numbers")
        for attr in NON_NEGATIVE.get(el.tag, ()):
            if attr in el.attrib:
                _numbers(el, attr, path, what, lambda x: 0 <= x <= 1e6, "finite numbers >= 0")
        if el.tag == "mesh":
            _mesh(el, path, what)


def _numbers(el: ET.Element, attr: str, path: str, what: str, ok, allowed: str) -> None:
    text = el.attrib.get(attr)
    try:
        values = [float(v) for v in (text or "").split()]
    except ValueError:
        values = []
    if not values or not all(math.isfinite(v) and ok(v) for v in values):
        raise URDFError(f"{what}: <{el.tag} {attr}={text!r}> must be {allowed}", path)


def _mesh(el: ET.Element, path: str, what: str) -> None:
    name = el.attrib.get("filename", "")
    if name.startswith("package://") or "://" in name:
        return  # resolved by PyBullet's own search path; not ours to find
    file = Path(name) if Path(name).is_absolute() else Path(path).parent / name
    if not file.is_file():
        raise URDFError(f"{what}: its mesh {name!r} is not a file (looked for {file})", path)
    if file.suffix.lower() in MESH_CHECKED:
        check_mesh_file(str(file), f"{what}: mesh {name!r}")


def check_object_file(shape: str, file: str | None, what: str) -> None:
    """An object's file checked before PyBullet sees it: a STL/OBJ mesh (check_mesh_file) or a URDF
    (check_object_urdf); other shapes have none."""
    if shape == "mesh" and file is not None and Path(file).suffix.lower() in MESH_CHECKED:
        check_mesh_file(file, what)
    elif shape == "urdf" and file is not None:
        check_object_urdf(file, what)
