"""Spheres that enclose every face of a convex shape, with little reach beyond it.

Greedy set cover, as sphere-tree builders do: candidate centres inside the shape (a grid, and points
inward of every corner), each with the radius ``depth + reach`` (depth: distance to the nearest face);
the candidate covering most still-uncovered surface samples is taken until none is left; each chosen
sphere then grows to its farthest assigned sample plus the sampling's covering radius, so that the whole
surface (not only the samples) is inside. Capsules and spheres have exact sphere chains instead.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.collision.meshes import ConvexMesh
from app.collision.sampling import excess_over, mesh_samples, tessellate

SPACING = 0.004  # [m] edges of the surface triangles the spheres must hold
EXCESS_SPACING = 0.0015  # [m] samples that measure the excess
MAX_CANDIDATES = 1500
MAX_POINTS = 12_000  # triangle corners of the cover (coarser triangles where a shape needs more)
MAX_SPHERES = 64  # per shape; a larger count means the reach asked for is too small for the shape


class FittedSpheres(NamedTuple):
    """Spheres (K, 4): centre x, y, z and radius [m] in the shape's frame; excess [m]: an upper bound on
    the distance from any point of their union's boundary to the shape."""

    spheres: np.ndarray
    excess: float


def _depth(points: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """Distance to the boundary of a convex polytope for points inside it (negative outside). Shape (N,)."""
    return -(points @ planes[:, :3].T + planes[:, 3]).max(axis=1)


def _candidates(hull: ConvexMesh, reach: float) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = hull.vertices.min(axis=0), hull.vertices.max(axis=0)
    ext = hi - lo
    step = max(float(np.prod(ext) / MAX_CANDIDATES) ** (1 / 3), 0.25 * reach)
    axes = [np.arange(lo[i] + (ext[i] % step) / 2, hi[i] + 1e-12, step) if ext[i] > step
            else np.array([(lo[i] + hi[i]) / 2]) for i in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    centroid = hull.vertices.mean(axis=0)
    inward = centroid - hull.vertices
    inward /= np.maximum(np.linalg.norm(inward, axis=1, keepdims=True), 1e-12)
    corners = np.concatenate([hull.vertices + t * reach * inward for t in (0.5, 1.0, 1.5, 2.5, 4.0)])
    cands = np.concatenate([grid, corners, centroid[None]])
    depth = _depth(cands, hull.planes)
    keep = depth > 1e-6
    return cands[keep], depth[keep]


def _cover(points: np.ndarray, tris: np.ndarray, cands: np.ndarray, radius: np.ndarray) -> list[int]:
    """Candidates chosen greedily until every triangle has its three corners inside one of them ([] if the
    cap MAX_SPHERES is reached first)."""
    # |p - c|^2 = |p|^2 + |c|^2 - 2 p.c as one matrix product (a rounding error here only changes which sphere
    # a triangle is assigned to: the radii are grown to the assigned corners afterwards)
    d2 = (points * points).sum(1)[:, None] + (cands * cands).sum(1)[None] - 2.0 * (points @ cands.T)
    inside = d2 <= (radius * radius)[None]
    covers = inside[tris[:, 0]] & inside[tris[:, 1]] & inside[tris[:, 2]]
    left = np.ones(len(tris), dtype=bool)
    gain = np.count_nonzero(covers, axis=0)
    chosen: list[int] = []
    while left.any() and len(chosen) < MAX_SPHERES:
        best = int(gain.argmax())
        if gain[best] == 0:
            return []
        chosen.append(best)
        newly = np.flatnonzero(left & covers[:, best])
        left[newly] = False
        gain -= np.count_nonzero(covers[newly], axis=0)
    return [] if left.any() else chosen


def fit_convex(hull: ConvexMesh, reach: float) -> FittedSpheres:
    """Spheres enclosing the surface of ``hull`` (each small surface triangle wholly inside one); ``reach``
    [m] guides how far they may bulge out (the stated excess is measured)."""
    points, tris = tessellate(hull, SPACING, MAX_POINTS)
    for _ in range(8):  # a reach too small for the candidates leaves triangles uncovered: widen it
        cands, depth = _candidates(hull, reach)
        chosen = _cover(points, tris, cands, depth + reach)
        if chosen:
            break
        reach *= 1.4
    else:
        raise RuntimeError("sphere cover failed")  # unreachable: the centroid's sphere grows to cover all
    centres = cands[chosen]
    corner_d = np.linalg.norm(points[tris][:, :, None, :] - centres[None, None], axis=3).max(axis=1)  # (T, K)
    owner = (corner_d - (depth[chosen] + reach)[None]).argmin(axis=1)  # the sphere holding it with most slack
    radius = np.array([corner_d[owner == k, k].max(initial=0.0) for k in range(len(chosen))])
    spheres = np.c_[centres, radius][radius > 0]  # a sphere that took no triangle is dropped
    surface, delta = mesh_samples(hull, EXCESS_SPACING)
    return FittedSpheres(spheres, excess_over(spheres, surface, delta, hull.planes, EXCESS_SPACING))


def capsule_chain(radius: float, length: float, reach: float) -> FittedSpheres:
    """Spheres along a capsule's z axis (centres from -length/2 to length/2) enclosing it; excess exact."""
    step = 2.0 * np.sqrt((radius + reach) ** 2 - radius ** 2)
    n = int(np.ceil(length / step)) + 1
    z = np.linspace(-length / 2, length / 2, n)
    r = np.sqrt(radius ** 2 + (length / (n - 1) / 2) ** 2) if n > 1 else radius
    return FittedSpheres(np.c_[np.zeros((n, 2)), z, np.full(n, r)], float(r - radius))
