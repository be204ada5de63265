"""Each link's collision geometry as spheres (links that joints move) and boxes (links fixed to the base:
exact for URDF boxes, the bounding box of a fixed mesh), with the stated excess per link: an upper bound
on how far the link's spheres or boxes reach beyond its collision shapes."""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from app.collision.fitting import EXCESS_SPACING, capsule_chain, fit_convex
from app.collision.meshes import ConvexMesh, box_mesh
from app.collision.sampling import mesh_samples
from app.collision.shapes import CollisionShape

T = TypeVar("T")
REACH = 0.006  # [m]: how far fitted spheres may bulge out (the excess measured comes out near 7-9 mm)
CAPSULE_REACH = 0.001  # [m]: a capsule's chain bulges exactly this much (spheres on its axis: cheap to keep tight)


def _in_link(spheres: np.ndarray, shape: CollisionShape) -> np.ndarray:
    out = spheres.copy()
    out[:, :3] = spheres[:, :3] @ shape.R.T + shape.p
    return out


def _once(memo: dict | None, key: tuple, compute: Callable[[], T]) -> T:
    """``compute()``, or what it gave for ``key`` before (a robot with several identical arms fits each hull
    once: the fit is a pure function of the hull's arrays)."""
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _hull_key(what: str, hull: ConvexMesh, *args) -> tuple:
    """A memo key: ``what``, the hull's arrays (dtype, shape, bytes) and ``args``."""
    return (what, *args, *((a.dtype.str, a.shape, a.tobytes()) for a in hull))


def shape_spheres(shape: CollisionShape, reach: float = REACH, memo: dict | None = None) -> tuple[np.ndarray, float]:
    """Spheres (K, 4) in the link frame enclosing ``shape``, and their excess [m]. ``memo``: a dict shared by
    the calls for one robot (identical hulls are fitted once) or None."""
    if shape.kind == "sphere":
        return np.array([[*shape.p, shape.size[0]]]), 0.0
    if shape.kind == "capsule":
        fitted = capsule_chain(*shape.size, min(reach, CAPSULE_REACH))
    else:
        fitted = _once(memo, _hull_key("spheres", shape.hull, reach), lambda: fit_convex(shape.hull, reach))
    spheres = _in_link(fitted.spheres, shape)
    spheres[:, 3] += shape.margin  # they then hold the hull inflated by the margin, with the same excess over it
    return spheres, fitted.excess


def bounding_box(vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The smaller of the axis-aligned and the principal-axes box around points (V, 3): R (3, 3), centre (3,),
    half extents (3,) in their frame (at least 0.1 mm each)."""
    best = None
    _, vecs = np.linalg.eigh(np.cov(vertices.T)) if len(vertices) > 1 else (None, np.eye(3))
    for R in (np.eye(3), vecs * np.sign(np.linalg.det(vecs))):
        local = vertices @ R
        lo, hi = local.min(axis=0), local.max(axis=0)
        if best is None or np.prod(hi - lo) < best[0]:
            best = (np.prod(hi - lo), R, R @ ((lo + hi) / 2), (hi - lo) / 2)
    return best[1], best[2], np.maximum(best[3], 1e-4)


def _hull_box(hull: ConvexMesh) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """bounding_box of ``hull`` and its excess [m] over the hull: R (3, 3), centre (3,), half (3,), excess."""
    R, c, half = bounding_box(hull.vertices)
    surface, delta = mesh_samples(hull, EXCESS_SPACING)
    corners, delta_box = mesh_samples(box_mesh(half), EXCESS_SPACING)
    from scipy.spatial import cKDTree  # here: ~0.18 s to import; only a sphere fit needs it

    gap, _ = cKDTree(surface).query(corners @ R.T + c)
    return R, c, half, float(gap.max() + delta + delta_box)


def shape_box(shape: CollisionShape, memo: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A box enclosing a box or mesh shape: R (3, 3), p (3,) in the link frame, half (3,), excess [m]. ``memo``:
    as for shape_spheres."""
    if shape.kind == "box":
        return shape.R, shape.p, np.array(shape.size), 0.0
    R, c, half, excess = _once(memo, _hull_key("box", shape.hull), lambda: _hull_box(shape.hull))
    return shape.R @ R, shape.R @ c + shape.p, half + shape.margin, excess


def exact_parts(shapes: list[CollisionShape], skip: set[str]) -> dict[str, list[tuple]]:
    """Per link (not in ``skip``) whose every shape is exactly convex, its shapes as parts in the link frame: a hull's vertices inflated by its margin (meshes, boxes, cylinders' prisms), a sphere's centre or a
    capsule's two ends inflated by the radius; each (vertices (v, 3), radius [m], triangles (f, 3) of a hull or None)
    (app.collision.packing)."""
    by_link: dict[str, list[CollisionShape]] = {}
    for shape in shapes:
        by_link.setdefault(shape.link, []).append(shape)
    out = {}
    for link, own in by_link.items():
        if link in skip:
            continue
        if all(s.hull is not None or s.kind in ("sphere", "capsule") for s in own):
            out[link] = [_part(s) for s in own]
    return out


def _part(shape: CollisionShape) -> tuple:
    """One shape as (vertices (v, 3) in the link frame, radius [m], the hull's triangles or None)."""
    if shape.kind == "sphere":
        return shape.p[None].copy(), float(shape.size[0]), None
    if shape.kind == "capsule":
        radius, length = shape.size
        ends = np.array([[0.0, 0.0, -length / 2], [0.0, 0.0, length / 2]])
        return ends @ shape.R.T + shape.p, float(radius), None
    return shape.hull.vertices @ shape.R.T + shape.p, float(shape.margin), shape.hull.faces
