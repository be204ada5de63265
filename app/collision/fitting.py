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
from app.collision.sampling import BLOCK, excess_over, mesh_samples, row_blocks, tessellate

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


def _inside(points: np.ndarray, cands: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """inside[i, j]: point i (N, 3) within candidate sphere j (centres (C, 3), radii (C,)). Shape (N, C) bool.

    |p - c|^2 = |p|^2 + |c|^2 - 2 p.c as a matrix product (a rounding error here only changes which sphere a
    triangle is assigned to: the radii are grown to the assigned corners afterwards), a block of rows at a time:
    the same floating-point operations as on the whole (N, C) matrix, without its ~200 MB temporaries."""
    pp, cc, r2 = (points * points).sum(1), (cands * cands).sum(1), radius * radius
    blocks, cands_t = row_blocks(len(points), len(cands)), cands.T
    inside = np.empty((len(points), len(cands)), dtype=bool)
    rows = max((stop - start for start, stop in blocks), default=0)
    two_pc, d2 = np.empty((rows, len(cands))), np.empty((rows, len(cands)))
    for start, stop in blocks:
        n = stop - start
        np.matmul(points[start:stop], cands_t, out=two_pc[:n])
        np.multiply(two_pc[:n], 2.0, out=two_pc[:n])
        np.add(pp[start:stop, None], cc[None], out=d2[:n])
        np.subtract(d2[:n], two_pc[:n], out=d2[:n])
        np.less_equal(d2[:n], r2[None], out=inside[start:stop])
    return inside


def _covers(inside: np.ndarray, tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """covers[t, j]: triangle t's three corners inside candidate j, and count[j]: the triangles candidate j
    covers. inside (N, C) bool, tris (T, 3) -> (T, C) bool, (C,) int32; a block of rows at a time (the
    temporaries and the rows summed stay in cache)."""
    covers = np.empty((len(tris), inside.shape[1]), dtype=bool)
    count = np.zeros(inside.shape[1], dtype=np.int32)
    rows = max(1, 4 * BLOCK // max(inside.shape[1], 1))
    corner = np.empty((rows, inside.shape[1]), dtype=bool)
    for start in range(0, len(tris), rows):
        stop = min(start + rows, len(tris))
        out, tmp = covers[start:stop], corner[:stop - start]
        np.take(inside, tris[start:stop, 0], axis=0, out=out)
        for k in (1, 2):
            np.take(inside, tris[start:stop, k], axis=0, out=tmp)
            out &= tmp
        count += np.add.reduce(out.view(np.uint8), axis=0, dtype=np.int32)
    return covers, count


def _cover(points: np.ndarray, tris: np.ndarray, cands: np.ndarray, radius: np.ndarray) -> list[int]:
    """Candidates chosen greedily until every triangle has its three corners inside one of them ([] if the
    cap MAX_SPHERES is reached first). points (N, 3), tris (T, 3), cands (C, 3), radius (C,)."""
    covers, gain = _covers(_inside(points, cands, radius), tris)  # gain: triangles left each candidate covers
    counts = covers.view(np.uint8)  # summed as uint8 into int32: 2-3x faster than np.count_nonzero(axis=0)
    left = np.ones(len(tris), dtype=bool)
    n_left = len(tris)
    chosen: list[int] = []
    while n_left:
        best = int(gain.argmax())
        if n_left > (MAX_SPHERES - len(chosen)) * int(gain[best]):
            return []  # the picks left, each covering at most gain[best] (gains only fall), cannot cover the rest
        chosen.append(best)
        newly = np.flatnonzero(left & covers[:, best])
        left[newly] = False
        n_left -= len(newly)
        gain -= np.add.reduce(counts[newly], axis=0, dtype=np.int32)
    return chosen


def _corner_distances(points: np.ndarray, tris: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Distance [m] from each sphere centre (K, 3) to the farthest corner of each triangle (T, 3) of points
    (N, 3). Shape (T, K). Point-centre distances once per point (N, K), then the max over the three corners."""
    to_point = np.linalg.norm(points[:, None, :] - centres[None], axis=2)
    return np.maximum(np.maximum(to_point[tris[:, 0]], to_point[tris[:, 1]]), to_point[tris[:, 2]])


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
    corner_d = _corner_distances(points, tris, centres)
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
