"""The search for the closest pair of spheres (or sphere and box) between two bodies, and optionally the
next-closest within a band: bounding-sphere pruning, groups of spheres visited nearest first, witnesses and
normals for the gradient. Inlined into the kernels of :mod:`app.collision._distance_kernels` (the QP's rows) or called
(clear, evidence: a shorter compile).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.collision._box_box import box_box, box_gap

# the next-closest sphere pair of a body pair (_pair): [0] distance, [1:4] [4:7] witnesses, [7:10] normal,
# [10:12] the closest pair's sphere indices, [12:21] scratch
NEXT_SIZE = 21


@njit(cache=True, nogil=True, inline="always")
def _box_distance(C, s, BR, BP, half, k, normal):
    """Signed distance of point C[s] (3,) to box k (frame BR[k] (3, 3), BP[k] (3,) in the base frame, half
    extents half[k] (3,)); the outward unit normal (gradient of the distance) into normal (3,). No allocation
    and no array views (indices, not rows, are passed: a view per call cost more than the arithmetic)."""
    e0, e1, e2 = C[s, 0] - BP[k, 0], C[s, 1] - BP[k, 1], C[s, 2] - BP[k, 2]
    u0 = BR[k, 0, 0] * e0 + BR[k, 1, 0] * e1 + BR[k, 2, 0] * e2
    u1 = BR[k, 0, 1] * e0 + BR[k, 1, 1] * e1 + BR[k, 2, 1] * e2
    u2 = BR[k, 0, 2] * e0 + BR[k, 1, 2] * e1 + BR[k, 2, 2] * e2
    q0, q1, q2 = abs(u0) - half[k, 0], abs(u1) - half[k, 1], abs(u2) - half[k, 2]
    o0, o1, o2 = max(q0, 0.0), max(q1, 0.0), max(q2, 0.0)
    out2 = o0 * o0 + o1 * o1 + o2 * o2
    if out2 > 0.0:
        dist = np.sqrt(out2)
        g0, g1, g2 = np.copysign(o0, u0) / dist, np.copysign(o1, u1) / dist, np.copysign(o2, u2) / dist
    else:
        g0 = g1 = g2 = 0.0
        if q0 >= q1 and q0 >= q2:
            dist, g0 = q0, 1.0 if u0 >= 0.0 else -1.0
        elif q1 >= q2:
            dist, g1 = q1, 1.0 if u1 >= 0.0 else -1.0
        else:
            dist, g2 = q2, 1.0 if u2 >= 0.0 else -1.0
    for r in range(3):
        normal[r] = BR[k, r, 0] * g0 + BR[k, r, 1] * g1 + BR[k, r, 2] * g2
    return dist


@njit(cache=True, nogil=True, inline="always")
def _lower_bounds(C, radius, s0, s1, centre, R, out):
    """Lower bounds of each sphere's distance to a body inside the bounding sphere (centre (3,), R)."""
    for s in range(s0, s1):
        e0, e1, e2 = C[s, 0] - centre[0], C[s, 1] - centre[1], C[s, 2] - centre[2]
        out[s - s0] = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) - radius[s] - R


@njit(cache=True, nogil=True, inline="always")
def _witness(C, radius, s, t, out, at):
    """Sphere pair (s, t)'s distance, with its witnesses (the centres) and normal (t -> s) into out[at:at + 9]."""
    d0, d1, d2 = C[s, 0] - C[t, 0], C[s, 1] - C[t, 1], C[s, 2] - C[t, 2]
    cc = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if cc > 1e-12:
        out[at + 6], out[at + 7], out[at + 8] = d0 / cc, d1 / cc, d2 / cc
    else:
        out[at + 6], out[at + 7], out[at + 8] = 0.0, 0.0, 1.0
    for r in range(3):
        out[at + r], out[at + 3 + r] = C[s, r], C[t, r]
    return cc - radius[s] - radius[t]


@njit(cache=True, nogil=True, inline="always")
def _sphere_sphere(C, radius, s, t, best, xa, xb, n, band, nxt):
    """best, or sphere pair (s, t)'s distance where closer (witnesses xa, xb and normal n then filled). With band >
    0, ``nxt`` (NEXT_SIZE,) keeps the next-closest sphere pair (the best one demoted, or (s, t)) and the best pair's
    indices (see NEXT_SIZE)."""
    d0, d1, d2 = C[s, 0] - C[t, 0], C[s, 1] - C[t, 1], C[s, 2] - C[t, 2]
    d = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - radius[s] - radius[t]
    if d < best:
        if band > 0.0 and best < 1e300:  # the best so far becomes the next
            nxt[0] = best
            for r in range(3):
                nxt[1 + r], nxt[4 + r], nxt[7 + r] = xa[r], xb[r], n[r]
        if band > 0.0:
            nxt[10], nxt[11] = s, t
        _witness(C, radius, s, t, nxt, 12)
        for r in range(3):
            xa[r], xb[r], n[r] = nxt[12 + r], nxt[15 + r], nxt[18 + r]
        return d
    if band > 0.0 and d < nxt[0] and not (s == nxt[10] and t == nxt[11]):
        nxt[0] = _witness(C, radius, s, t, nxt, 1)
    return best


@njit(cache=True, nogil=True, inline="always")
def _limit(best, nxt, band, cap):
    """Sphere pairs not closer than this [m] cannot change the answer: the best, or with band > 0 the next-closest
    within ``band`` of it; never beyond ``cap``."""
    if band > 0.0:
        return min(max(best, min(nxt[0], best + band)), cap)
    return min(best, cap)


@njit(cache=True, nogil=True, inline="always")
def _pair(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, stop, cap, band, nxt):
    """Smallest distance between bodies a and b; witness points xa, xb and the normal n (b -> a) filled.

    Each sphere's distance to the other body's bounding sphere bounds its distances from below: the pair of
    spheres nearest to the other body gives a first best, and spheres whose bound is not below it are skipped.
    Returns as soon as the best is below ``stop`` (then it is an upper bound). Sphere pairs that cannot come
    closer than ``cap`` are skipped too (then a result >= cap only says "not below cap"). With ``band`` > 0 the
    next-closest sphere pair (or sphere-box) within ``band`` of the best goes into ``nxt`` (NEXT_SIZE,):
    distance nxt[0] (1e300: none), witnesses nxt[1:4], nxt[4:7], normal nxt[7:10].
    """
    sp, bd = ct.spheres, ct.bodies
    sa0, sa1, sb0, sb1 = bd.s0[a], bd.s1[a], bd.s0[b], bd.s1[b]
    best = 1e300
    nxt[0], nxt[10], nxt[11] = 1e300, -1.0, -1.0
    if sa1 > sa0 and sb1 > sb0:  # the bounds serve the sphere-sphere loops only
        _lower_bounds(C, sp.radius, sa0, sa1, bounds[b], bd.radius[b], lb_a)
        _lower_bounds(C, sp.radius, sb0, sb1, bounds[a], bd.radius[a], lb_b)
        best = _sphere_sphere(C, sp.radius, sa0 + np.argmin(lb_a[:sa1 - sa0]), sb0 + np.argmin(lb_b[:sb1 - sb0]),
                              best, xa, xb, n, band, nxt)
    gp = ct.groups
    for ga in range(bd.g0[a], bd.g1[a]):  # sphere-sphere, a group pair at a time
        for gb in range(bd.g0[b], bd.g1[b]):
            e0, e1, e2 = GC[ga, 0] - GC[gb, 0], GC[ga, 1] - GC[gb, 1], GC[ga, 2] - GC[gb, 2]
            reach = _limit(best, nxt, band, cap) + gp.radius[ga] + gp.radius[gb]
            if reach <= 0.0 or e0 * e0 + e1 * e1 + e2 * e2 >= reach * reach:
                continue
            for s in range(gp.s0[ga], gp.s1[ga]):
                if lb_a[s - sa0] >= _limit(best, nxt, band, cap):
                    continue
                cs0, cs1, cs2, rs = C[s, 0], C[s, 1], C[s, 2], sp.radius[s]
                for t in range(gp.s0[gb], gp.s1[gb]):
                    limit = _limit(best, nxt, band, cap)
                    if lb_b[t - sb0] >= limit:
                        continue
                    d0, d1, d2 = cs0 - C[t, 0], cs1 - C[t, 1], cs2 - C[t, 2]
                    reach = limit + rs + sp.radius[t]
                    if reach > 0.0 and d0 * d0 + d1 * d1 + d2 * d2 >= reach * reach:
                        continue
                    best = _sphere_sphere(C, sp.radius, s, t, best, xa, xb, n, band, nxt)
                    if best < stop:
                        return best
    if bd.k1[b] > bd.k0[b]:  # b's boxes (boxes on side a only where both hold boxes only: CollisionModel's order)
        best = _spheres_boxes(ct, C, BR, BP, GC, a, b, best, xa, xb, n, lb_b[:3], lb_a, stop, cap, band, nxt)
    if bd.k1[a] > bd.k0[a]:  # bodies of boxes only on both sides
        best = _boxes_boxes(ct, BR, BP, a, b, best, cap, xa, xb, n, nxt)
    return best


@njit(cache=True, nogil=True)
def _boxes_boxes(ct, BR, BP, a, b, best, cap, xa, xb, n, nxt):
    """Body a's boxes against body b's, exactly (app.collision._box_box): best, or the closest box pair's distance
    with its witnesses and normal (b -> a) in xa, xb, n where closer (nxt[12:21] as scratch; no next-closest);
    box pairs that cannot come closer than ``cap`` are not measured (as :func:`_pair`)."""
    half, w = ct.boxes.half, np.empty(18)
    for k in range(ct.bodies.k0[a], ct.bodies.k1[a]):
        for m in range(ct.bodies.k0[b], ct.bodies.k1[b]):
            d = box_box(BR, BP, half, k, m, nxt[12:15], nxt[15:18], nxt[18:21], w, min(best, cap))
            if d < best:
                best = d
                for r in range(3):
                    xa[r], xb[r], n[r] = nxt[12 + r], nxt[15 + r], nxt[18 + r]
    return best


@njit(cache=True, nogil=True)
def _pair_called(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, stop, cap, nxt):
    """:func:`_pair` as a called function, for the kernels whose speed matters less than their compile time
    (clear_kernel, evidence_kernel): the search inlined into each of them made a fresh checkout compile ~4x
    longer; the QP's rows (distances_kernel) inline it (~10 % faster rows)."""
    return _pair(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, stop, cap, 0.0, nxt)


@njit(cache=True, nogil=True, inline="always")
def _sphere_box_witness(C, radius, BR, BP, half, s, k, nn, xa, xb, n):
    """Sphere s against box k: its witnesses (the centre, and the box point under it) and normal into xa, xb, n."""
    d = _box_distance(C, s, BR, BP, half, k, nn) - radius[s]
    for r in range(3):
        n[r] = nn[r]
        xa[r] = C[s, r]
        xb[r] = C[s, r] - (d + radius[s]) * nn[r]


@njit(cache=True, nogil=True, inline="always")
def _spheres_boxes(ct, C, BR, BP, GC, a, b, best, xa, xb, n, nn, low, stop, cap, band, nxt):
    """Body a's spheres against body b's boxes, a group of a's spheres at a time: each group's bound (the box
    distance of its centre less its radius; the box distance is 1-Lipschitz, so it bounds every sphere of the
    group) computed once into ``low`` (scratch, at least a's group count long), then the groups visited nearest
    bound first until the next bound is not below the best so far (with band > 0: the next-closest within band,
    kept in nxt as :func:`_pair` says; the best found before, if demoted, becomes it)."""
    sp, bx, bd, gp = ct.spheres, ct.boxes, ct.bodies, ct.groups
    g0, ng = bd.g0[a], bd.g1[a] - bd.g0[a]
    best_s, best_k, next_s, next_k, demoted = -1, -1, -1, -1, False
    for k in range(bd.k0[b], bd.k1[b]):
        for v in range(ng):
            low[v] = box_gap(GC, g0 + v, BR, BP, bx.half, k) - gp.radius[g0 + v]
        for _ in range(ng):
            v = 0
            for u in range(1, ng):
                if low[u] < low[v]:
                    v = u
            if low[v] >= _limit(best, nxt, band, cap):
                break  # every group left is at least this far
            low[v] = 1e300  # visited
            g = g0 + v
            for s in range(gp.s0[g], gp.s1[g]):
                d = box_gap(C, s, BR, BP, bx.half, k) - sp.radius[s]
                if d < best:
                    if band > 0.0 and best < 1e300:  # the best so far becomes the next
                        nxt[0], next_s, next_k, demoted = best, best_s, best_k, best_s < 0
                    best, best_s, best_k = d, s, k
                elif band > 0.0 and d < nxt[0]:
                    nxt[0], next_s, next_k, demoted = d, s, k, False
            if best < stop:
                break
        if best < stop:
            break
    if demoted:  # the sphere-sphere best (its witnesses still in xa, xb, n) is the next now
        for r in range(3):
            nxt[1 + r], nxt[4 + r], nxt[7 + r] = xa[r], xb[r], n[r]
    elif next_s >= 0:
        _sphere_box_witness(C, sp.radius, BR, BP, bx.half, next_s, next_k, nn, nxt[1:4], nxt[4:7], nxt[7:10])
    if best_s >= 0:  # the witnesses and the normal of the closest sphere only
        _sphere_box_witness(C, sp.radius, BR, BP, bx.half, best_s, best_k, nn, xa, xb, n)
    return best
