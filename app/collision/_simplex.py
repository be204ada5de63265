"""The closest point of a GJK simplex (1 to 4 points of the Minkowski difference) to the origin, by Ericson's regions
(Real-Time Collision Detection, 5.1.5 and 5.1.6 with the query point at the origin): the barycentric weights of the
closest point, and the simplex reduced to the points of its region.

The scratch ``S`` (app.collision._gjk.SCRATCH) holds the simplex: S[0:12] its points w, S[12:24] their A points,
S[24:36] their B points, S[36:40] the weights, S[40:76] a copy (the tetrahedron's faces are tried on it); ``idx``:
scratch for the points kept.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _dot(S, i, j):
    return S[3 * i] * S[3 * j] + S[3 * i + 1] * S[3 * j + 1] + S[3 * i + 2] * S[3 * j + 2]


@njit(cache=True, nogil=True)
def _keep(S, idx, n):
    """Simplex points idx[:n] (ascending) moved to the front (with their A and B points); returns n."""
    for k in range(n):
        i = idx[k]
        if i != k:
            for base in (0, 12, 24):
                for r in range(3):
                    S[base + 3 * k + r] = S[base + 3 * i + r]
    return n


@njit(cache=True, nogil=True, inline="always")
def _point(S, idx, i):
    """The region of simplex point i alone: weight 1, the point kept; returns 1."""
    idx[0] = i
    S[36] = 1.0
    return _keep(S, idx, 1)


@njit(cache=True, nogil=True, inline="always")
def _edge(S, idx, i, j, t):
    """The region of edge (i, j), the closest point at fraction t from i: weights 1 - t, t, the points kept; returns
    2."""
    idx[0], idx[1] = i, j
    S[36], S[37] = 1.0 - t, t
    return _keep(S, idx, 2)


@njit(cache=True, nogil=True)
def segment(S, idx):
    """Closest point of segment (0, 1) to the origin: weights into S[36:38], the points kept; returns the count."""
    d00, d01, d11 = _dot(S, 0, 0), _dot(S, 0, 1), _dot(S, 1, 1)
    t_num, t_den = d00 - d01, d00 - 2.0 * d01 + d11  # t along w0 -> w1
    if t_num <= 0.0:
        return _point(S, idx, 0)
    if t_num >= t_den:
        return _point(S, idx, 1)
    return _edge(S, idx, 0, 1, t_num / t_den)


@njit(cache=True, nogil=True)
def triangle(S, idx):
    """Closest point of triangle (0, 1, 2) to the origin (Ericson 5.1.5 with p = 0): weights into S[36:39], the
    points of its region kept (in order); returns the count."""
    ab_ap = _dot(S, 0, 0) - _dot(S, 0, 1)
    ac_ap = _dot(S, 0, 0) - _dot(S, 0, 2)
    if ab_ap <= 0.0 and ac_ap <= 0.0:
        return _point(S, idx, 0)
    ab_bp = _dot(S, 0, 1) - _dot(S, 1, 1)  # ab . bp, bp = -b
    ac_bp = _dot(S, 0, 1) - _dot(S, 1, 2)
    if ab_bp >= 0.0 and ac_bp <= ab_bp:
        return _point(S, idx, 1)
    vc = ab_ap * ac_bp - ac_ap * ab_bp
    if vc <= 0.0 and ab_ap >= 0.0 and ab_bp <= 0.0:
        return _edge(S, idx, 0, 1, ab_ap / (ab_ap - ab_bp))
    ab_cp = _dot(S, 0, 2) - _dot(S, 1, 2)
    ac_cp = _dot(S, 0, 2) - _dot(S, 2, 2)
    if ac_cp >= 0.0 and ab_cp <= ac_cp:
        return _point(S, idx, 2)
    vb = ab_cp * ac_ap - ab_ap * ac_cp
    if vb <= 0.0 and ac_ap >= 0.0 and ac_cp <= 0.0:
        return _edge(S, idx, 0, 2, ac_ap / (ac_ap - ac_cp))
    va = ab_bp * ac_cp - ab_cp * ac_bp
    if va <= 0.0 and (ac_bp - ab_bp) >= 0.0 and (ab_cp - ac_cp) >= 0.0:
        return _edge(S, idx, 1, 2, (ac_bp - ab_bp) / ((ac_bp - ab_bp) + (ab_cp - ac_cp)))
    den = 1.0 / (va + vb + vc)
    v, w = vb * den, vc * den
    S[36], S[37], S[38] = 1.0 - v - w, v, w
    return 3


@njit(cache=True, nogil=True)
def _copy(S, src, dst, i, j):
    """Point i of the block at ``src`` (its w, A and B) to slot j of the block at ``dst``."""
    for base in (0, 12, 24):
        for r in range(3):
            S[dst + base + 3 * j + r] = S[src + base + 3 * i + r]


@njit(cache=True, nogil=True)
def _outside(S, at, i, j, k, m):
    """Whether the origin lies on the other side of face (i, j, k)'s plane than point m (or the face is flat), the
    points those of the block at ``at`` (0: the simplex, 40: its copy)."""
    a0, a1, a2 = S[at + 3 * i], S[at + 3 * i + 1], S[at + 3 * i + 2]
    b0, b1, b2 = S[at + 3 * j] - a0, S[at + 3 * j + 1] - a1, S[at + 3 * j + 2] - a2
    c0, c1, c2 = S[at + 3 * k] - a0, S[at + 3 * k + 1] - a1, S[at + 3 * k + 2] - a2
    n0, n1, n2 = b1 * c2 - b2 * c1, b2 * c0 - b0 * c2, b0 * c1 - b1 * c0
    side_o = -(n0 * a0 + n1 * a1 + n2 * a2)
    side_m = n0 * (S[at + 3 * m] - a0) + n1 * (S[at + 3 * m + 1] - a1) + n2 * (S[at + 3 * m + 2] - a2)
    return side_o * side_m <= 0.0


@njit(cache=True, nogil=True)
def _closest_sq(S, n):
    """|sum of weights x points|^2 of the first n simplex points."""
    v0 = v1 = v2 = 0.0
    for k in range(n):
        v0 += S[36 + k] * S[3 * k]
        v1 += S[36 + k] * S[3 * k + 1]
        v2 += S[36 + k] * S[3 * k + 2]
    return v0 * v0 + v1 * v1 + v2 * v2


@njit(cache=True, nogil=True, inline="always")
def _face(f):
    """The points of tetrahedron face f (the one without point f)."""
    if f == 0:
        return 1, 2, 3
    if f == 1:
        return 0, 2, 3
    if f == 2:
        return 0, 1, 3
    return 0, 1, 2


@njit(cache=True, nogil=True)
def _on_face(S, idx, f):
    """Face f's points (from the copy at 40) into slots 0..2, then its closest point: returns the count kept."""
    i, j, k = _face(f)
    _copy(S, 40, 0, i, 0)
    _copy(S, 40, 0, j, 1)
    _copy(S, 40, 0, k, 2)
    return triangle(S, idx)


@njit(cache=True, nogil=True)
def tetrahedron(S, idx):
    """Closest point of tetrahedron (0..3) to the origin: the best face's region (weights, points kept; its count),
    or 4 where the origin is inside."""
    for f in range(4):
        _copy(S, 0, 40, f, f)
    best, best_face = 1e300, -1
    for f in range(4):
        i, j, k = _face(f)
        if _outside(S, 40, i, j, k, f):  # (on the copy: _on_face overwrites the simplex's slots)
            d = _closest_sq(S, _on_face(S, idx, f))
            if d < best:
                best, best_face = d, f
    if best_face < 0:
        return 4
    return _on_face(S, idx, best_face)
