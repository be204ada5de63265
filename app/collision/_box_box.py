"""The exact signed distance between two oriented boxes, with witness points and the normal, for the distance kernels
(a link whose collision shape is a box against another box: a link, a world box, an object).

Apart (no separating axis fails): the closest points of two convex polyhedra lie on a vertex and a face, or on two
edges, so the distance is the least of every vertex's distance to the other box and every edge pair's (16 + 144
measures, each exact). Overlapping: the separating-axis test over the 15 axes of two boxes (3 + 3 face normals, 9
edge cross products) gives the penetration depth, the least overlap, and its axis as the normal; the witnesses are
then the deepest corner of box a along it and that corner moved by the depth.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_SIGNS = np.array([[-1.0, -1.0, -1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [1.0, 1.0, -1.0],
                   [-1.0, -1.0, 1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])


@njit(cache=True, nogil=True, inline="always")
def _corner(BR, BP, half, k, c, out):
    """Corner c (0..7) of box k in the base frame into out (3,)."""
    s0, s1, s2 = _SIGNS[c, 0] * half[k, 0], _SIGNS[c, 1] * half[k, 1], _SIGNS[c, 2] * half[k, 2]
    for r in range(3):
        out[r] = BP[k, r] + BR[k, r, 0] * s0 + BR[k, r, 1] * s1 + BR[k, r, 2] * s2


@njit(cache=True, nogil=True, inline="always")
def _closest_on_box(x, BR, BP, half, k, out):
    """The point of box k closest to x (3,) (x itself inside) into out; returns the distance (0 inside)."""
    e0, e1, e2 = x[0] - BP[k, 0], x[1] - BP[k, 1], x[2] - BP[k, 2]
    u0 = min(max(e0 * BR[k, 0, 0] + e1 * BR[k, 1, 0] + e2 * BR[k, 2, 0], -half[k, 0]), half[k, 0])
    u1 = min(max(e0 * BR[k, 0, 1] + e1 * BR[k, 1, 1] + e2 * BR[k, 2, 1], -half[k, 1]), half[k, 1])
    u2 = min(max(e0 * BR[k, 0, 2] + e1 * BR[k, 1, 2] + e2 * BR[k, 2, 2], -half[k, 2]), half[k, 2])
    d2 = 0.0
    for r in range(3):
        out[r] = BP[k, r] + BR[k, r, 0] * u0 + BR[k, r, 1] * u1 + BR[k, r, 2] * u2
        d2 += (x[r] - out[r]) ** 2
    return np.sqrt(d2)


@njit(cache=True, nogil=True, inline="always")
def _segments(p1, d1, p2, d2, c1, c2):
    """Closest points c1 on p1 + s d1 and c2 on p2 + t d2 (s, t in [0, 1]); returns their distance."""
    r0, r1, r2 = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]
    f = d2[0] * r0 + d2[1] * r1 + d2[2] * r2
    c = d1[0] * r0 + d1[1] * r1 + d1[2] * r2
    b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
    denom = a * e - b * b
    s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 1e-14 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t, s = 1.0, min(max((b - c) / a, 0.0), 1.0)
    dist2 = 0.0
    for r in range(3):
        c1[r] = p1[r] + s * d1[r]
        c2[r] = p2[r] + t * d2[r]
        dist2 += (c1[r] - c2[r]) ** 2
    return np.sqrt(dist2)


@njit(cache=True, nogil=True)
def _sat_overlap(BR, BP, half, k, m, axis, L):
    """(the least overlap of boxes k and m over the 15 separating axes (negative: apart along one, and minus it is a
    lower bound of their distance), which axis: 0-2 k's face normals, 3-5 m's, 6 + 3 u + v k's edge u by m's edge
    v); the unit axis, pointing from m's centre towards k's, into axis (3,); L (3,): scratch."""
    T0, T1, T2 = BP[k, 0] - BP[m, 0], BP[k, 1] - BP[m, 1], BP[k, 2] - BP[m, 2]
    best, which = 1e300, -1
    for i in range(15):
        if i < 3:
            for r in range(3):
                L[r] = BR[k, r, i]
        elif i < 6:
            for r in range(3):
                L[r] = BR[m, r, i - 3]
        else:
            u, v = (i - 6) // 3, (i - 6) % 3
            L[0] = BR[k, 1, u] * BR[m, 2, v] - BR[k, 2, u] * BR[m, 1, v]
            L[1] = BR[k, 2, u] * BR[m, 0, v] - BR[k, 0, u] * BR[m, 2, v]
            L[2] = BR[k, 0, u] * BR[m, 1, v] - BR[k, 1, u] * BR[m, 0, v]
            norm = np.sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2])
            if norm < 1e-9:  # parallel edges: their axis is a face normal's, already tested
                continue
            for r in range(3):
                L[r] /= norm
        ra, rb, tl = 0.0, 0.0, T0 * L[0] + T1 * L[1] + T2 * L[2]
        for c in range(3):
            ra += half[k, c] * abs(BR[k, 0, c] * L[0] + BR[k, 1, c] * L[1] + BR[k, 2, c] * L[2])
            rb += half[m, c] * abs(BR[m, 0, c] * L[0] + BR[m, 1, c] * L[1] + BR[m, 2, c] * L[2])
        overlap = ra + rb - abs(tl)
        if overlap < best:
            best, which = overlap, i
            sign = 1.0 if tl >= 0.0 else -1.0
            for r in range(3):
                axis[r] = sign * L[r]
    return best, which


@njit(cache=True, nogil=True)
def _apart(BR, BP, half, k, m, xa, xb, w):
    """The distance of boxes k (side a) and m (side b) that no axis finds overlapping: the least over vertex-box and
    edge-edge measures; witnesses into xa (on k), xb (on m); w (18,): scratch."""
    v, c, best = w[0:3], w[3:6], 1e300
    for side in range(2):  # k's corners against m, then m's against k
        own, other = (k, m) if side == 0 else (m, k)
        for corner in range(8):
            _corner(BR, BP, half, own, corner, v)
            d = _closest_on_box(v, BR, BP, half, other, c)
            if d < best:
                best = d
                for r in range(3):
                    xa[r], xb[r] = (v[r], c[r]) if side == 0 else (c[r], v[r])
    p1, d1, p2, d2, c1, c2 = w[0:3], w[3:6], w[6:9], w[9:12], w[12:15], w[15:18]
    for i in range(12):
        _edge(BR, BP, half, k, i, p1, d1)
        for j in range(12):
            _edge(BR, BP, half, m, j, p2, d2)
            d = _segments(p1, d1, p2, d2, c1, c2)
            if d < best:
                best = d
                for r in range(3):
                    xa[r], xb[r] = c1[r], c2[r]
    return best


@njit(cache=True, nogil=True, inline="always")
def _edge(BR, BP, half, k, i, start, direction):
    """Edge i (0..11) of box k: start (3,) and direction (3,) (start + direction is its other end), base frame.
    Edges 4 a: along axis a // 4 ... i // 4 the axis, i % 4 the corner of the other two axes' signs."""
    a = i // 4
    b, c = (a + 1) % 3, (a + 2) % 3
    sb = half[k, b] if i % 2 else -half[k, b]
    sc = half[k, c] if (i // 2) % 2 else -half[k, c]
    for r in range(3):
        start[r] = BP[k, r] - BR[k, r, a] * half[k, a] + BR[k, r, b] * sb + BR[k, r, c] * sc
        direction[r] = 2.0 * BR[k, r, a] * half[k, a]


@njit(cache=True, nogil=True, inline="always")
def box_gap(C, s, BR, BP, half, k):
    """The signed distance [m] of point C[s] (3,) to box k (negative inside: the depth), without the normal
    (app.collision._pair_search._box_distance adds it): what the searches and the bounds compare."""
    e0, e1, e2 = C[s, 0] - BP[k, 0], C[s, 1] - BP[k, 1], C[s, 2] - BP[k, 2]
    q0 = abs(BR[k, 0, 0] * e0 + BR[k, 1, 0] * e1 + BR[k, 2, 0] * e2) - half[k, 0]
    q1 = abs(BR[k, 0, 1] * e0 + BR[k, 1, 1] * e1 + BR[k, 2, 1] * e2) - half[k, 1]
    q2 = abs(BR[k, 0, 2] * e0 + BR[k, 1, 2] * e1 + BR[k, 2, 2] * e2) - half[k, 2]
    o0, o1, o2 = max(q0, 0.0), max(q1, 0.0), max(q2, 0.0)
    out2 = o0 * o0 + o1 * o1 + o2 * o2
    return np.sqrt(out2) if out2 > 0.0 else max(q0, q1, q2)


@njit(cache=True, nogil=True, inline="always")
def centres_bound(BR, BP, half, reach, k, m):
    """A bound from below of boxes k and m's distance [m]: each one's centre's distance to the other box less its
    half diagonal ``reach`` (the larger of the two)."""
    return max(box_gap(BP, k, BR, BP, half, m) - reach[k], box_gap(BP, m, BR, BP, half, k) - reach[m])


@njit(cache=True, nogil=True)
def box_box(BR, BP, half, k, m, xa, xb, n, w, above):
    """Signed distance [m] of box k (side a) and box m (side b) (frames BR (K, 3, 3), BP (K, 3), half extents
    half (K, 3), base frame); witnesses xa on k, xb on m and the unit normal n from b towards a into (3,) each;
    w (18,): scratch. Where a separating axis already shows them at least ``above`` apart, that bound is returned
    (>= above) and xa, xb, n are not filled: nothing closer is wanted."""
    depth, which = _sat_overlap(BR, BP, half, k, m, n, w[0:3])
    if -depth >= above:
        return -depth
    if depth < 0.0:  # apart: measured exactly
        d = _apart(BR, BP, half, k, m, xa, xb, w)
        if d > 1e-12:
            for r in range(3):
                n[r] = (xa[r] - xb[r]) / d
        return d
    _contact(BR, BP, half, k, m, which, n, xa, w)  # overlapping: where they touch, on k
    for r in range(3):
        xb[r] = xa[r] + depth * n[r]
    return -depth


@njit(cache=True, nogil=True)
def _contact(BR, BP, half, k, m, which, n, xa, w):
    """Overlapping boxes' witness on k (into xa), for the axis ``which`` of least overlap (n, from m towards k): on
    k's face, the point under m's corner deepest in k; on m's face, k's corner deepest in m; for two edges, the
    point of k's deepest edge nearest m's deepest edge. Moved by the depth along n it lies on m (box_box)."""
    v, depth_best = w[0:3], -1e300
    if which < 3:  # m's corner furthest towards k, then back onto k's face below
        for c in range(8):
            _corner(BR, BP, half, m, c, v)
            along = v[0] * n[0] + v[1] * n[1] + v[2] * n[2]
            if along > depth_best:
                depth_best = along
                for r in range(3):
                    xa[r] = v[r]
        overlap = -1e300
        for c in range(8):
            _corner(BR, BP, half, k, c, v)
            overlap = max(overlap, -(v[0] * n[0] + v[1] * n[1] + v[2] * n[2]))
        shift = depth_best + overlap  # how far m's corner lies beyond k's face, along n
        for r in range(3):
            xa[r] -= shift * n[r]
        return
    if which < 6:  # k's corner furthest towards m
        for c in range(8):
            _corner(BR, BP, half, k, c, v)
            along = -(v[0] * n[0] + v[1] * n[1] + v[2] * n[2])
            if along > depth_best:
                depth_best = along
                for r in range(3):
                    xa[r] = v[r]
        return
    u, t = (which - 6) // 3, (which - 6) % 3
    p1, d1, p2, d2 = w[3:6], w[6:9], w[9:12], w[12:15]
    best_k, best_m, low, high = 4 * u, 4 * t, 1e300, -1e300
    for e in range(4):  # k's edge along u deepest towards m, m's edge along t deepest towards k
        _edge(BR, BP, half, k, 4 * u + e, p1, d1)
        mid = (p1[0] + 0.5 * d1[0]) * n[0] + (p1[1] + 0.5 * d1[1]) * n[1] + (p1[2] + 0.5 * d1[2]) * n[2]
        if mid < low:
            low, best_k = mid, 4 * u + e
        _edge(BR, BP, half, m, 4 * t + e, p2, d2)
        mid = (p2[0] + 0.5 * d2[0]) * n[0] + (p2[1] + 0.5 * d2[1]) * n[1] + (p2[2] + 0.5 * d2[2]) * n[2]
        if mid > high:
            high, best_m = mid, 4 * t + e
    _edge(BR, BP, half, k, best_k, p1, d1)
    _edge(BR, BP, half, m, best_m, p2, d2)
    _lines(p1, d1, p2, d2, xa)


@njit(cache=True, nogil=True, inline="always")
def _lines(p1, d1, p2, d2, c1):
    """The point of the line p1 + s d1 nearest the line p2 + t d2 (not parallel) into c1: where two crossing edges
    touch, the depth along their common normal changes as that point moves."""
    r0, r1, r2 = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]
    b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
    c = d1[0] * r0 + d1[1] * r1 + d1[2] * r2
    f = d2[0] * r0 + d2[1] * r1 + d2[2] * r2
    s = (b * f - c * e) / max(a * e - b * b, 1e-300)
    for r in range(3):
        c1[r] = p1[r] + s * d1[r]
