"""Dense surface samples of convex meshes and spheres, each with its covering radius: every point of the
surface lies within ``delta`` of some sample, which turns "every sample is inside with slack delta" into
"the whole surface is inside"."""

from __future__ import annotations

import numpy as np

from app.collision.meshes import ConvexMesh

MAX_SAMPLES = 30_000  # per shape: beyond this the spacing grows (a 1 m post sampled at 2 mm needs ~10^5)
BLOCK = 65_536  # entries per block of a (points x columns) product (0.5 MB of float64; larger blocks, over ~260k
# multiply-adds, make OpenBLAS start threads, which costs 5-20x more than the product itself here)


def row_blocks(n: int, columns: int) -> list[tuple[int, int]]:
    """(start, stop) of consecutive blocks of rows of an (n, columns) product, BLOCK entries or a row more,
    none of one row unless n == 1: numpy multiplies a one-row matrix with gemv instead of gemm, which may
    round differently, and a product in blocks must give the same bits as in one piece."""
    rows = max(2, BLOCK // max(columns, 1))
    starts = list(range(0, n, rows))
    if len(starts) > 1 and n - starts[-1] == 1:
        starts.pop()
    return list(zip(starts, starts[1:] + [n]))


def tessellate(hull: ConvexMesh, spacing: float, max_points: int = MAX_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Every face of ``hull`` cut into small triangles with edges <= about ``spacing`` (more where the
    count would pass ``max_points``).

    Returns:
        ``(points, triangles)``: corner points (N, 3) in the hull's frame and corner indices (T, 3). A sphere
        (convex) that holds a triangle's three corners holds the whole triangle.
    """
    tri = hull.vertices[hull.faces]  # (F, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum()
    longest = np.linalg.norm(tri - np.roll(tri, 1, axis=1), axis=2).max(axis=1)
    spacing = max(spacing, np.sqrt(2.0 * area / max_points))
    cuts = np.maximum(1, np.ceil(longest / spacing))
    while ((cuts + 1) * (cuts + 2) / 2).sum() > max_points and cuts.max() > 1:  # skinny faces: coarser
        spacing *= 1.25
        cuts = np.maximum(1, np.ceil(longest / spacing))
    pts, tris, base = [], [], 0
    for n in np.unique(cuts).astype(int):
        sel = tri[cuts == n]
        i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        keep = i + j <= n
        index = np.full((n + 1, n + 1), -1)
        index[keep] = np.arange(keep.sum())
        u, v = i[keep] / n, j[keep] / n
        local = [(index[a, b], index[a + 1, b], index[a, b + 1]) for a in range(n) for b in range(n - a)]
        local += [(index[a + 1, b], index[a + 1, b + 1], index[a, b + 1]) for a in range(n) for b in range(n - a - 1)]
        w = 1.0 - u - v
        pts.append((w[None, :, None] * sel[:, None, 0] + u[None, :, None] * sel[:, None, 1]
                    + v[None, :, None] * sel[:, None, 2]).reshape(-1, 3))
        tris.append((np.array(local)[None] + base + keep.sum() * np.arange(len(sel))[:, None, None]).reshape(-1, 3))
        base += keep.sum() * len(sel)
    return np.concatenate(pts), np.concatenate(tris)


def mesh_samples(hull: ConvexMesh, spacing: float) -> tuple[np.ndarray, float]:
    """Points on every face of ``hull``; every surface point lies within the returned delta [m] of one (the
    corners of triangles with edges <= h: a point of such a triangle is within h/sqrt(3) of a corner)."""
    pts, tris = tessellate(hull, spacing)
    h = np.linalg.norm(pts[tris] - np.roll(pts[tris], 1, axis=1), axis=2).max()
    return pts, float(h / np.sqrt(3.0))


def sphere_points(n: int) -> np.ndarray:
    """n nearly even unit vectors (a Fibonacci lattice). Shape (n, 3)."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    r = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    phi = k * np.pi * (3.0 - np.sqrt(5.0))
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _covered(points: np.ndarray, spheres: np.ndarray) -> np.ndarray:
    """Which points (N, 3) lie strictly inside one of ``spheres`` (K, 4). Shape (N,) bool. Each sphere tests
    only the points no earlier one holds (the same distances, row by row, as testing all)."""
    inside = np.zeros(len(points), dtype=bool)
    for x, y, z, r in spheres:
        rest = np.flatnonzero(~inside)
        inside[rest] = np.linalg.norm(points[rest] - [x, y, z], axis=1) < r
    return inside


def union_surface(spheres: np.ndarray, spacing: float) -> tuple[np.ndarray, float]:
    """Points on the boundary of a union of spheres (x, y, z, r) (K, 4): each sphere's surface sampled at
    about ``spacing``, less the points inside another sphere. Returns (points (N, 3), eta): every boundary
    point lies within eta of a sample of its own sphere."""
    out, eta = [], 0.0
    centres, radii = spheres[:, :3], spheres[:, 3]
    # spheres apart by more than 1 um (far beyond rounding) hold none of each other's samples
    near = np.linalg.norm(centres[:, None] - centres[None], axis=2) < radii[:, None] + radii[None] + 1e-6
    np.fill_diagonal(near, False)
    for k, (x, y, z, r) in enumerate(spheres):
        n = int(np.clip(4 * np.pi * r * r / spacing ** 2, 64, 40_000))
        pts = np.array([x, y, z]) + r * sphere_points(n)
        eta = max(eta, 0.7 * r * np.sqrt(4 * np.pi / n))  # the lattice's covering radius (measured ~0.6x)
        out.append(pts[~_covered(pts, spheres[near[k]])])
    return np.concatenate(out) if out else np.zeros((0, 3)), eta


def _farthest_outside(points: np.ndarray, dist: np.ndarray, planes: np.ndarray) -> float:
    """The largest of ``dist`` (N,) over the points (N, 3) outside the planes (F, 4) (0 if none): the same as
    setting the inside ones to 0 and taking the max, testing the points in falling ``dist`` order, a block at
    a time (the first block usually holds an outside point)."""
    order = np.argsort(dist)[::-1]
    for start, stop in row_blocks(len(order), len(planes)):
        idx = order[start:stop]
        inside = (points[idx] @ planes[:, :3].T + planes[:, 3]).max(axis=1) <= 0.0
        if not inside.all():
            return dist[idx[~inside]].max()
    return 0.0


def excess_over(spheres: np.ndarray, surface: np.ndarray, delta: float, planes: np.ndarray | None,
                spacing: float) -> float:
    """An upper bound [m] on how far the union of ``spheres`` reaches beyond a convex shape: the largest
    distance from a point of the union's boundary to the shape.

    Args:
        spheres: (K, 4) x, y, z, r. surface: Samples of the shape's surface (N, 3) within ``delta`` of every
        surface point. planes: The shape's face planes (F, 4) (points inside count 0); None: use samples only.
    """
    pts, eta = union_surface(spheres, spacing)
    if len(pts) == 0:
        return 0.0
    from scipy.spatial import cKDTree  # here: ~0.18 s to import; only a sphere fit needs it

    dist, _ = cKDTree(surface).query(pts)
    farthest = dist.max() if planes is None else _farthest_outside(pts, dist, planes)
    return float(farthest + eta)  # sample distance >= true distance; eta: the boundary between samples
