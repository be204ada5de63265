"""Each link's collision geometry as spheres (links that joints move) and boxes (links fixed to the base:
exact for URDF boxes, the bounding box of a fixed mesh), with the stated excess per link: an upper bound
on how far the link's spheres or boxes reach beyond its collision shapes."""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from app.collision.fitting import EXCESS_SPACING, capsule_chain, fit_convex
from app.collision.meshes import ConvexMesh, box_mesh
from app.collision.sampling import mesh_samples
from app.collision.shapes import CollisionShape

REACH = 0.006  # [m]: how far fitted spheres may bulge out (the excess measured comes out near 7-9 mm)


def _in_link(spheres: np.ndarray, shape: CollisionShape) -> np.ndarray:
    out = spheres.copy()
    out[:, :3] = spheres[:, :3] @ shape.R.T + shape.p
    return out


def shape_spheres(shape: CollisionShape, reach: float = REACH) -> tuple[np.ndarray, float]:
    """Spheres (K, 4) in the link frame enclosing ``shape``, and their excess [m]."""
    if shape.kind == "sphere":
        return np.array([[*shape.p, shape.size[0]]]), 0.0
    fitted = capsule_chain(*shape.size, reach) if shape.kind == "capsule" else fit_convex(shape.hull, reach)
    spheres = _in_link(fitted.spheres, shape)
    spheres[:, 3] += shape.margin  # they then hold the hull inflated by the margin, with the same excess over it
    return spheres, fitted.excess


def bounding_box(hull: ConvexMesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The smaller of the axis-aligned and the principal-axes box around a hull: R (3, 3), centre (3,),
    half extents (3,) in the hull's frame."""
    best = None
    _, vecs = np.linalg.eigh(np.cov(hull.vertices.T))
    for R in (np.eye(3), vecs * np.sign(np.linalg.det(vecs))):
        local = hull.vertices @ R
        lo, hi = local.min(axis=0), local.max(axis=0)
        if best is None or np.prod(hi - lo) < best[0]:
            best = (np.prod(hi - lo), R, R @ ((lo + hi) / 2), (hi - lo) / 2)
    return best[1], best[2], np.maximum(best[3], 1e-4)


def shape_box(shape: CollisionShape) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A box enclosing a box or mesh shape: R (3, 3), p (3,) in the link frame, half (3,), excess [m]."""
    if shape.kind == "box":
        return shape.R, shape.p, np.array(shape.size), 0.0
    R, c, half = bounding_box(shape.hull)
    surface, delta = mesh_samples(shape.hull, EXCESS_SPACING)
    corners, delta_box = mesh_samples(box_mesh(half), EXCESS_SPACING)
    gap, _ = cKDTree(surface).query(corners @ R.T + c)
    return shape.R @ R, shape.R @ c + shape.p, half + shape.margin, float(gap.max() + delta + delta_box)
