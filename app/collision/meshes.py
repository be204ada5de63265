"""Mesh files -> convex hulls, as PyBullet uses a URDF's collision mesh (the convex hull of its vertices).

Reads binary and ASCII STL and Wavefront OBJ (vertices only: the hull needs nothing else). Collada
(.dae), which PyBullet also loads, is refused with a message saying what to convert it to.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.errors import URDFError


class ConvexMesh(NamedTuple):
    """A convex polytope. Frame: whatever the vertices were given in.

    Attributes:
        vertices: Hull vertices [m]. Shape (V, 3).
        faces: Triangles, indices into ``vertices``, outward by the right-hand rule. Shape (F, 3).
        planes: Face planes ``n . x + d <= 0`` inside, unit outward n. Shape (F, 4): n (3), d.
    """

    vertices: np.ndarray
    faces: np.ndarray
    planes: np.ndarray


def read_vertices(path: str) -> np.ndarray:
    """Every vertex of an STL (binary or ASCII) or OBJ file, unscaled. Shape (N, 3).

    Raises:
        URDFError: unreadable file, unsupported format, or no vertex in it.
    """
    suffix = Path(path).suffix.lower()
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise URDFError(f"cannot read mesh: {exc}", path) from None
    try:
        if suffix == ".stl":
            pts = _stl_vertices(data)
        elif suffix == ".obj":
            pts = _obj_vertices(data.decode("utf-8", errors="replace"))
    except ValueError as exc:  # a vertex that is no number
        raise URDFError(f"mesh has a vertex that is not three numbers ({exc})", path) from None
    if suffix not in (".stl", ".obj"):
        raise URDFError(f"collision meshes must be .stl or .obj for the sphere model (got {suffix or 'no suffix'}); "
                        "convert it (e.g. with trimesh or Blender) or give the link's spheres in the sphere YAML",
                        path)
    if len(pts) == 0 or not np.isfinite(pts).all():
        raise URDFError("mesh has no vertex, or one that is NaN or inf: not a usable STL/OBJ mesh", path)
    return pts


MAX_COORDINATE = 1e5  # a mesh vertex's distance from its origin, in the file's units
MESH_CHECKED = (".stl", ".obj")  # the mesh formats check_mesh_file reads (PyBullet's own loaders)


def check_mesh_file(path: str, what: str = "mesh") -> None:
    """What PyBullet's mesh loaders need to not crash (a NaN vertex or random bytes end the process): a readable
    STL (binary: its size matches its triangle count; ASCII: whole triangles) or OBJ (faces naming existing
    vertices), with finite vertices.

    Raises:
        URDFError: naming the file and what is wrong with it.
    """
    pts = read_vertices(path)
    if np.abs(pts).max() > MAX_COORDINATE:
        raise URDFError(f"{what}: a vertex lies {np.abs(pts).max():.3g} from the origin; a mesh's coordinates must be "
                        f"within +-{MAX_COORDINATE:g} (metres, or millimetres scaled by the object's scale)", path)
    if Path(path).suffix.lower() == ".stl" and len(pts) % 3:
        raise URDFError(f"{what}: an ASCII STL holds {len(pts)} vertices, not whole triangles", path)
    if Path(path).suffix.lower() == ".obj":
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
        tokens = " ".join(re.findall(r"^f\s+(.*)$", text, re.MULTILINE)).split()
        refs = [int(t.split("/")[0]) for t in tokens if re.fullmatch(r"-?\d+(/\S*)?", t)]
        bad = [r for r in refs if not (1 <= r <= len(pts) or -len(pts) <= r <= -1)]
        if bad:
            raise URDFError(f"{what}: faces name vertex {bad[0]}, but the file has {len(pts)} vertices", path)
    if np.count_nonzero(np.ptp(pts, axis=0) > 0) < 2:
        raise URDFError(f"{what}: every vertex lies on one point or one line: the mesh has no surface", path)


def _stl_vertices(data: bytes) -> np.ndarray:
    if len(data) >= 84:
        (n_tri,) = struct.unpack_from("<I", data, 80)
        if 84 + 50 * n_tri == len(data):  # binary: the size says so (ASCII headers may start with "solid" too)
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=n_tri, offset=84)
            return rec["v"].reshape(-1, 3).astype(float)
    text = data.decode("ascii", errors="replace")
    nums = re.findall(r"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", text, re.MULTILINE)
    return np.array(nums, dtype=float).reshape(-1, 3)


def _obj_vertices(text: str) -> np.ndarray:
    nums = re.findall(r"^v\s+(\S+)\s+(\S+)\s+(\S+)", text, re.MULTILINE)
    return np.array(nums, dtype=float).reshape(-1, 3)


def convex_hull(points: np.ndarray, what: str = "mesh") -> ConvexMesh:
    """Convex hull of points (N, 3) with outward triangles and unit face planes.

    Raises:
        URDFError: the points are flat or degenerate (no volume).
    """
    from scipy.spatial import ConvexHull, QhullError  # here: ~0.18 s to import; only collision models need it

    pts = np.unique(np.round(np.asarray(points, dtype=float), 12), axis=0)
    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError) as exc:
        raise URDFError(f"{what}: its vertices span no volume, so it has no convex hull ({exc.__class__.__name__})")
    verts = pts[hull.vertices]
    remap = np.full(len(pts), -1)
    remap[hull.vertices] = np.arange(len(hull.vertices))
    faces = remap[hull.simplices]
    planes = hull.equations.copy()
    # orient each triangle outward (qhull's simplices are not consistently ordered)
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), planes[:, :3]) < 0
    faces[flip] = faces[flip][:, [0, 2, 1]]
    return ConvexMesh(verts, faces, planes)


def box_mesh(half: np.ndarray) -> ConvexMesh:
    """The box [-half, half] as a convex mesh."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float) * half
    return convex_hull(corners, "box")


def prism_mesh(radius: float, length: float, sides: int = 48) -> ConvexMesh:
    """A prism around the z axis that encloses the cylinder (radius, length): its polygon is circumscribed."""
    outer = radius / np.cos(np.pi / sides)
    ang = 2 * np.pi * (np.arange(sides) + 0.5) / sides
    ring = np.stack([outer * np.cos(ang), outer * np.sin(ang)], axis=1)
    pts = np.concatenate([np.c_[ring, np.full(sides, -length / 2)], np.c_[ring, np.full(sides, length / 2)]])
    return convex_hull(pts, "cylinder")
