"""The distance between two convex parts (GJK): each part the convex hull of its vertices inflated by a radius (a
mesh's hull and PyBullet's margin, a box's corners, a sphere's centre, a capsule's two ends), posed by a link frame.

Gilbert, Johnson and Keerthi's iteration on the Minkowski difference A - B: the simplex's closest point to the origin
(app.collision._simplex: Ericson's regions with barycentric weights), then the support point against
it, until the gap between the bound from below (the supporting plane's distance) and the closest point is below a
relative 1e-9 or 1e-9 m. The weights give the witness on each part. No allocation: the scratch ``S`` (SCRATCH,) is the
caller's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.collision._box_box import _sat_overlap
from app.collision._simplex import segment, tetrahedron, triangle

SCRATCH = 76  # S[0:12] simplex points w, [12:24] their A points, [24:36] their B points, [36:40] weights, [40:76] a copy
OVERLAP = -1e300  # gjk's answer when the hulls themselves intersect (the depth is not measured)
MAX_ITERS = 64


@njit(cache=True, nogil=True, inline="always")
def _support(V, v0, v1, nbr0, nbr, start, R, p, link, d0, d1, d2, S, at):
    """The vertex of V[v0:v1] (link frame of ``link``, -1: base) farthest along d (base frame), in the base frame,
    into S[at:at + 3]; returns its index. A hull with edges (nbr0, nbr) is climbed from vertex ``start`` (on a
    convex polytope a vertex no neighbour improves on is the farthest); a part without is searched whole."""
    if link >= 0:
        e0 = R[link, 0, 0] * d0 + R[link, 1, 0] * d1 + R[link, 2, 0] * d2
        e1 = R[link, 0, 1] * d0 + R[link, 1, 1] * d1 + R[link, 2, 1] * d2
        e2 = R[link, 0, 2] * d0 + R[link, 1, 2] * d1 + R[link, 2, 2] * d2
    else:
        e0, e1, e2 = d0, d1, d2
    if nbr0[v0 + 1] == nbr0[v0]:
        best, k = -1e300, v0
        for v in range(v0, v1):
            s = V[v, 0] * e0 + V[v, 1] * e1 + V[v, 2] * e2
            if s > best:
                best, k = s, v
    else:
        k = start
        best = V[k, 0] * e0 + V[k, 1] * e1 + V[k, 2] * e2
        for _ in range(v1 - v0):
            up = k
            for m in range(nbr0[k], nbr0[k + 1]):
                v = nbr[m]
                s = V[v, 0] * e0 + V[v, 1] * e1 + V[v, 2] * e2
                if s > best:
                    best, up = s, v
            if up == k:
                break
            k = up
    x, y, z = V[k, 0], V[k, 1], V[k, 2]
    if link >= 0:
        for r in range(3):
            S[at + r] = p[link, r] + R[link, r, 0] * x + R[link, r, 1] * y + R[link, r, 2] * z
    else:
        S[at], S[at + 1], S[at + 2] = x, y, z
    return k


@njit(cache=True, nogil=True)
def gjk(V, nbr0, nbr, a0, a1, la, ra, b0, b1, lb, rb, R, p, cap, floor, S, idx, xa, xb, n):
    """Distance [m] between part A (vertices V[a0:a1] in the frame of link la, -1: base; radius ra) and part B
    (V[b0:b1], lb, rb), link frames R (L, 3, 3), p (L, 3); hull edges nbr0, nbr (app.collision.collision_tables).

    Where it is below ``cap``: the witnesses xa, xb (3,) and the unit normal n (3,) from B to A; else a bound from
    below that is >= cap. Once the distance is known to be below ``floor``, that bound from above is returned without
    witnesses (a yes/no check needs no more; -inf: never). OVERLAP where the hulls themselves meet (radii aside: the
    depth is not measured). On entry xa - xb is the first direction from B to A tried (zero: any) and idx[4], idx[5]
    the vertices the supports climb from (outside a part: its first); on return idx[4], idx[5] are the last supports
    found (a warm start for the parts' next call). S (SCRATCH,), idx (6,) int64: scratch."""
    g0, g1, g2 = xa[0] - xb[0], xa[1] - xb[1], xa[2] - xb[2]
    if g0 * g0 + g1 * g1 + g2 * g2 < 1e-24:
        g0, g1, g2 = 1.0, 0.0, 0.0
    ka = _support(V, a0, a1, nbr0, nbr, idx[4] if a0 <= idx[4] < a1 else a0, R, p, la, -g0, -g1, -g2, S, 12)
    kb = _support(V, b0, b1, nbr0, nbr, idx[5] if b0 <= idx[5] < b1 else b0, R, p, lb, g0, g1, g2, S, 24)
    idx[4], idx[5] = ka, kb
    for r in range(3):
        S[r] = S[12 + r] - S[24 + r]
    S[36], count, reach = 1.0, 1, cap + ra + rb
    for _ in range(MAX_ITERS):
        v0 = v1 = v2 = 0.0
        for k in range(count):
            v0 += S[36 + k] * S[3 * k]
            v1 += S[36 + k] * S[3 * k + 1]
            v2 += S[36 + k] * S[3 * k + 2]
        vv = v0 * v0 + v1 * v1 + v2 * v2
        if vv < 1e-24:
            return OVERLAP
        if np.sqrt(vv) - ra - rb < floor:
            return np.sqrt(vv) - ra - rb
        at = 3 * count
        ka = _support(V, a0, a1, nbr0, nbr, ka, R, p, la, -v0, -v1, -v2, S, 12 + at)
        kb = _support(V, b0, b1, nbr0, nbr, kb, R, p, lb, v0, v1, v2, S, 24 + at)
        idx[4], idx[5] = ka, kb
        for r in range(3):
            S[at + r] = S[12 + at + r] - S[24 + at + r]
        vw = v0 * S[at] + v1 * S[at + 1] + v2 * S[at + 2]
        if vw > 0.0 and vw * vw >= reach * reach * vv and reach > 0.0:
            return vw / np.sqrt(vv) - ra - rb  # the supporting plane: not below cap
        if vv - vw <= 1e-9 * vv or vv - vw <= 1e-18:
            break  # converged: the new point brings the simplex no closer
        count += 1
        if count == 2:
            count = segment(S, idx)
        elif count == 3:
            count = triangle(S, idx)
        else:
            count = tetrahedron(S, idx)
            if count == 4:
                return OVERLAP
    d = 0.0
    for r in range(3):
        xa[r] = xb[r] = 0.0
        for k in range(count):
            xa[r] += S[36 + k] * S[12 + 3 * k + r]
            xb[r] += S[36 + k] * S[24 + 3 * k + r]
        n[r] = xa[r] - xb[r]
        d += n[r] * n[r]
    d = np.sqrt(d)
    if d < 1e-12:
        return OVERLAP
    for r in range(3):
        n[r] /= d
        xa[r] -= ra * n[r]
        xb[r] += rb * n[r]
    return d - ra - rb


@njit(cache=True, nogil=True)
def parts_distance(pt, R, p, h0a, h1a, h0b, h1b, cap, floor, S, idx, W, OB, xa, xb, n):
    """The least GJK distance [m] between parts [h0a, h1a) and [h0b, h1b) of the PartSet ``pt``: below ``cap``
    with its witnesses and normal (B -> A) in xa, xb, n; else a bound from below >= cap; below ``floor`` a bound
    from above, at once (gjk). A part pair whose bounding spheres, or boxes by a separating axis, are at least the cap
    apart is not measured. xa - xb on entry: the direction tried first. OVERLAP where two parts' hulls meet.
    W (3, 3): scratch; OB: the parts placed for this configuration (place_parts)."""
    best = 1e300
    BR, BP, PC, axis, L, last = OB
    for i in range(h0a, h1a):
        for j in range(h0b, h1b):
            c = min(best, cap)
            d0, d1, d2 = PC[i, 0] - PC[j, 0], PC[i, 1] - PC[j, 1], PC[i, 2] - PC[j, 2]
            gap = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - pt.reach[i] - pt.reach[j]
            if gap < c:
                gap = -_sat_overlap(BR, BP, pt.box_half, i, j, axis, L)[0]
            if gap >= c:  # not closer than the cap, nor than the best so far
                best = min(best, gap)
                continue
            for r in range(3):
                W[0, r], W[1, r] = xa[r], xb[r]
            idx[4], idx[5] = last[i, j], last[j, i]
            d = gjk(pt.vertex, pt.nbr0, pt.nbr, pt.v0[i], pt.v1[i], pt.link[i], pt.radius[i], pt.v0[j], pt.v1[j],
                    pt.link[j], pt.radius[j], R, p, c, floor, S, idx, W[0], W[1], W[2])
            last[i, j], last[j, i] = idx[4], idx[5]
            if d == OVERLAP:
                return OVERLAP
            if d < floor:
                return d
            if d < c:
                best = d
                for r in range(3):
                    xa[r], xb[r], n[r] = W[0, r], W[1, r], W[2, r]
            elif best >= 1e300:
                best = d
    return best


@njit(cache=True, nogil=True)
def part_scratch(pt):
    """parts_distance's placed parts: box frames R (H, 3, 3), p (H, 3) and sphere centres (H, 3) in the base frame;
    axis (3,), L (3,): scratch; last (H, H): part i's last support vertex against part j (GJK's warm start, kept
    across the configurations of a call: a pair's direction changes little between them)."""
    H = pt.link.shape[0]
    last = np.empty((H, H), dtype=np.int64)
    for i in range(H):
        last[i, :] = pt.v0[i]
    return np.empty((H, 3, 3)), np.empty((H, 3)), np.empty((H, 3)), np.empty(3), np.empty(3), last


@njit(cache=True, nogil=True)
def place_parts(pt, bd, used, R, p, OB):
    """The parts of the bodies ``used`` (N,) (BodyTables bd): box frame and sphere centre in the base frame for link
    frames R, p, into OB (part_scratch)."""
    for j in range(bd.link.shape[0]):
        if used[j]:
            for i in range(bd.h0[j], bd.h1[j]):
                _place_part(pt, i, R, p, OB[0], OB[1], OB[2])  # (OB[5], the warm starts, carry over)


@njit(cache=True, nogil=True, inline="always")
def _place_part(pt, i, R, p, BR, BP, PC):
    """Part i's box frame BR[i], BP[i] and sphere centre PC[i] in the base frame."""
    link = pt.link[i]
    for r in range(3):
        if link < 0:
            BP[i, r], PC[i, r] = pt.box_p[i, r], pt.centre[i, r]
            for c in range(3):
                BR[i, r, c] = pt.box_R[i, r, c]
            continue
        BP[i, r] = p[link, r] + R[link, r, 0] * pt.box_p[i, 0] + R[link, r, 1] * pt.box_p[i, 1] + \
            R[link, r, 2] * pt.box_p[i, 2]
        PC[i, r] = p[link, r] + R[link, r, 0] * pt.centre[i, 0] + R[link, r, 1] * pt.centre[i, 1] + \
            R[link, r, 2] * pt.centre[i, 2]
        for c in range(3):
            BR[i, r, c] = R[link, r, 0] * pt.box_R[i, 0, c] + R[link, r, 1] * pt.box_R[i, 1, c] + \
                R[link, r, 2] * pt.box_R[i, 2, c]
