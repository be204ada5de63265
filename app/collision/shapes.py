"""A URDF's collision geometry, link by link, as PyBullet builds it: boxes, cylinders, spheres, capsules
and meshes (their convex hull), each with its origin in the link frame.

Mesh paths are resolved as for the simulator (app.kinematics.description.resolve_uri).
"""

from __future__ import annotations

import hashlib
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.collision.meshes import ConvexMesh, box_mesh, convex_hull, prism_mesh, read_vertices
from app.errors import URDFError
from app.kinematics.description import resolve_uri
from app.kinematics.rotations import rpy_to_matrix

MESH_MARGIN = 0.001  # [m] Bullet's margin on the convex hulls PyBullet's URDF importer makes of meshes and
# cylinders (measured: a URDF cylinder reports 1.0 mm less than its geometric distance to a box)


class CollisionShape(NamedTuple):
    """One ``<collision>`` element.

    Attributes:
        link: The link's name.
        kind: "box", "cylinder", "sphere", "capsule" or "mesh".
        R, p: The shape frame in the link frame. Shapes (3, 3), (3,) [m].
        size: box: half extents (3,); cylinder and capsule: (radius, length); sphere: (radius,) [m].
        hull: The convex polytope that PyBullet collides with (box, mesh; a circumscribed prism for a cylinder),
            in the shape frame; None for spheres and capsules.
        source: What it came from, for messages ("link_2 collision 0: mesh .../link_2.stl").
        margin: [m] PyBullet's collision margin around the shape: its convex hulls (meshes, cylinders) collide
            as the hull inflated by MESH_MARGIN (measured: hull-hull distances 2 mm below the geometric ones);
            0 for boxes, spheres and capsules.
    """

    link: str
    kind: str
    R: np.ndarray
    p: np.ndarray
    size: tuple[float, ...]
    hull: ConvexMesh | None
    source: str
    margin: float = 0.0


def _floats(text: str | None, n: int, default: float, what: str, path: str) -> np.ndarray:
    if text is None:
        return np.full(n, default)
    try:
        vals = np.array([float(t) for t in text.split()])
    except ValueError:
        vals = np.array([])
    if vals.shape != (n,) or not np.isfinite(vals).all():
        raise URDFError(f"{what} must be {n} finite numbers, got {text!r}", path)
    return vals


def collision_shapes(text: str, urdf_path: str, package_dirs=None) -> tuple[list[CollisionShape], list[str]]:
    """Every collision shape of a URDF's links, and the mesh files read (for cache keys).

    Args:
        text: URDF text (xacro already expanded). urdf_path: Where it came from (relative mesh URIs).
        package_dirs: Where ``package://`` packages live (see app.kinematics.description).
    Raises:
        URDFError: malformed geometry; MeshNotFoundError: a mesh that cannot be found.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"malformed XML: {exc}", urdf_path) from None
    base_dir = os.path.dirname(os.path.abspath(urdf_path))
    shapes, meshes = [], []
    for link in root.findall("link"):
        name = link.get("name", "")
        for k, col in enumerate(link.findall("collision")):
            origin = col.find("origin")
            what = f"link '{name}' collision {k}"
            xyz = _floats(None if origin is None else origin.get("xyz"), 3, 0.0, f"{what} origin xyz", urdf_path)
            rpy = _floats(None if origin is None else origin.get("rpy"), 3, 0.0, f"{what} origin rpy", urdf_path)
            geom = col.find("geometry")
            child = None if geom is None or len(geom) == 0 else geom[0]
            if child is None:
                raise URDFError(f"{what} has no geometry", urdf_path)
            shape = _shape(name, child, rpy_to_matrix(rpy), xyz, what, urdf_path, base_dir, package_dirs, meshes)
            shapes.append(shape)
    return shapes, meshes


def _positive(el: ET.Element, key: str, what: str, path: str) -> float:
    val = _floats(el.get(key), 1, np.nan, f"{what} {el.tag} {key}", path)[0]
    if not val > 0:
        raise URDFError(f"{what} {el.tag} {key} must be > 0, got {el.get(key)!r}", path)
    return float(val)


def _shape(link, el, R, p, what, path, base_dir, package_dirs, meshes) -> CollisionShape:
    tag = el.tag
    if tag == "box":
        half = _floats(el.get("size"), 3, np.nan, f"{what} box size", path) / 2
        if not (half > 0).all():
            raise URDFError(f"{what} box size must be 3 numbers > 0, got {el.get('size')!r}", path)
        return CollisionShape(link, "box", R, p, tuple(half), box_mesh(half), f"{what}: box")
    if tag in ("cylinder", "capsule"):
        radius, length = _positive(el, "radius", what, path), _positive(el, "length", what, path)
        hull = prism_mesh(radius, length) if tag == "cylinder" else None  # PyBullet: a hull too, so its margin
        return CollisionShape(link, tag, R, p, (radius, length), hull, f"{what}: {tag}",
                              MESH_MARGIN if tag == "cylinder" else 0.0)
    if tag == "sphere":
        return CollisionShape(link, "sphere", R, p, (_positive(el, "radius", what, path),), None, f"{what}: sphere")
    if tag == "mesh":
        file = resolve_uri(el.get("filename", ""), base_dir, package_dirs)
        scale = _floats(el.get("scale"), 3, 1.0, f"{what} mesh scale", path)
        meshes.append(file)
        hull = convex_hull(read_vertices(file) * scale, f"{path}: {what} mesh {file}")
        return CollisionShape(link, "mesh", R, p, tuple(scale), hull, f"{what}: mesh {file}", MESH_MARGIN)
    raise URDFError(f"{what}: geometry <{tag}> is not one of box, cylinder, sphere, capsule, mesh", path)


def content_key(parts: list[bytes]) -> str:
    """SHA-256 (hex, 24 digits) over byte strings, each length-prefixed."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:24]


def files_key(text: str, files: list[str], extra: list[bytes]) -> str:
    """Cache key of a description: its text, the bytes of the files it reads, and ``extra``."""
    return content_key([text.encode()] + [Path(f).read_bytes() for f in sorted(set(files))] + extra)
