"""Compiled signed distances between bodies of spheres, boxes and exact convex parts, and their gradients in joint
space.

One call takes a batch of configurations; each is independent (run over threads by app.kernels.dispatch.chunked).
Conventions: a pair's distance is the smallest over its sphere-sphere and sphere-box distances (negative:
penetration); its gradient row is d(distance)/dq = n . (v_a - v_b), n the unit normal from b's witness to
a's, v the linear velocity of each witness point per unit joint speed (rows 0-2 of the project's geometric
Jacobian, base frame).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.collision._box_box import box_gap, centres_bound
from app.collision._gjk import OVERLAP, SCRATCH, part_scratch, parts_distance
from app.collision._pair_search import NEXT_SIZE, _pair, _pair_called
from app.collision._placing import _placed, _pose, _scratch, _used


@njit(cache=True, nogil=True, inline="always")
def _add_velocity_row(R, p, link, x, n, sign, jac, row):
    """row[k] += sign * n . (linear velocity of point x (base frame) on ``link`` per unit speed of DOF k)."""
    if link < 0:
        return
    for k in range(jac.axis.shape[0]):
        if not jac.ancestor[link, k]:
            continue
        j = jac.dof_link[k]
        z0 = R[j, 0, 0] * jac.axis[k, 0] + R[j, 0, 1] * jac.axis[k, 1] + R[j, 0, 2] * jac.axis[k, 2]
        z1 = R[j, 1, 0] * jac.axis[k, 0] + R[j, 1, 1] * jac.axis[k, 1] + R[j, 1, 2] * jac.axis[k, 2]
        z2 = R[j, 2, 0] * jac.axis[k, 0] + R[j, 2, 1] * jac.axis[k, 1] + R[j, 2, 2] * jac.axis[k, 2]
        if jac.revolute[k]:
            d0, d1, d2 = x[0] - p[j, 0], x[1] - p[j, 1], x[2] - p[j, 2]
            v0, v1, v2 = z1 * d2 - z2 * d1, z2 * d0 - z0 * d2, z0 * d1 - z1 * d0
        else:
            v0, v1, v2 = z0, z1, z2
        row[k] += sign * (n[0] * v0 + n[1] * v1 + n[2] * v2)


@njit(cache=True, nogil=True, inline="always")
def _boxes_lower_bound(bounds, bd, bx, BR, BP, a, b):
    """A bound from below of body a's distance to body b, of boxes only: a's bounding sphere against each box (the
    box distance is 1-Lipschitz); where a holds boxes only too, the larger of that and the least over their box
    pairs of centres_bound (a long bar of a rig's frame against a camera: the bounding spheres say little)."""
    low = 1e300
    for k in range(bd.k0[b], bd.k1[b]):
        low = min(low, box_gap(bounds, a, BR, BP, bx.half, k) - bd.radius[a])
    if bd.s1[a] == bd.s0[a] and bd.k1[a] > bd.k0[a]:
        pairs = 1e300
        for k in range(bd.k0[a], bd.k1[a]):
            for m in range(bd.k0[b], bd.k1[b]):
                pairs = min(pairs, centres_bound(BR, BP, bx.half, bx.reach, k, m))
        low = max(low, pairs)
    return low


@njit(cache=True, nogil=True, inline="always")
def _moving_link(link, L, olink):
    """The robot link whose motion moves a body of frame ``link``: itself, or for an object (frame L + m) the link
    it is given in (-1: none)."""
    return link if link < L else olink[link - L]


@njit(cache=True, nogil=True, inline="always")
def _bounding_gap(bounds, radius, a, b):
    """Distance [m] between the bounding spheres of bodies a and b: a lower bound of their distance."""
    d0, d1, d2 = bounds[a, 0] - bounds[b, 0], bounds[a, 1] - bounds[b, 1], bounds[a, 2] - bounds[b, 2]
    return np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - radius[a] - radius[b]


@njit(cache=True, nogil=True, inline="always")
def _refined(bd, a, b):
    """Whether the pair of bodies a and b is measured on its parts: both have parts, one is refined."""
    return (bd.refine[a] or bd.refine[b]) and bd.h1[a] > bd.h0[a] and bd.h1[b] > bd.h0[b]


@njit(cache=True, nogil=True, inline="always")
def _parts(ct, R, p, bounds, a, b, cap, floor, G, idx, W, OB, xa, xb, n):
    """Bodies a and b measured on their parts (app.collision._gjk.parts_distance: exact below ``cap``, witnesses in
    xa, xb, n; a bound from below >= cap; below ``floor`` a bound from above), first direction along their bounding
    centres; OVERLAP where their hulls meet."""
    bd = ct.bodies
    for r in range(3):
        xa[r], xb[r] = bounds[a, r], bounds[b, r]
    return parts_distance(ct.parts, R, p, bd.h0[a], bd.h1[a], bd.h0[b], bd.h1[b], cap, floor, G, idx, W, OB, xa, xb,
                          n)


@njit(cache=True, nogil=True)
def _gjk_scratch(ct):
    """GJK's scratch: S (SCRATCH,), idx (6,), witness rows W (3, 3), the placed parts (part_scratch)."""
    return np.empty(SCRATCH), np.zeros(6, dtype=np.int64), np.empty((3, 3)), part_scratch(ct.parts)


@njit(cache=True, nogil=True)
def distances_kernel(q, oR, op, olink, fk, jac, ct, cutoff, with_gradient, band):
    """Distances (B, P) and gradients (B, P, n_dofs) (zeros unless with_gradient) for q (B, n_dofs). A pair
    not closer than ``cutoff`` [m] gets a lower bound of its distance that is >= cutoff (the bounding spheres'
    distance, or the cutoff) and a zero gradient; spheres that cannot come within the cutoff are not
    measured. Objects: oR (B or 1, M, 3, 3), op (B or 1, M, 3), olink (B or 1, M) (ObjectPoses). With band > 0
    and gradients, also each pair's next-closest sphere pair (or sphere-box) within ``band`` [m] of its closest
    and below the cutoff: its distance (B, P) (inf: none) and gradient (B, P, n_dofs); else those are (B, P) inf
    and (B, P, 0)."""
    B, P, L, nd = q.shape[0], ct.pairs.a.shape[0], fk.parent.shape[0], jac.axis.shape[0]
    dist, dist2 = np.empty((B, P)), np.full((B, P), np.inf)
    grad = np.zeros((B, P, nd if with_gradient else 0))
    band = band if with_gradient else 0.0
    grad2 = np.zeros((B, P, nd if band > 0.0 else 0))
    R, p, C, BR, BP, bounds, GC, xa, xb, n, lb_a, lb_b, placed = _scratch(L + oR.shape[1], ct)
    nxt = np.empty(NEXT_SIZE)
    G, idx, W, OB = _gjk_scratch(ct)
    use = _used(ct, fk.parent, oR.shape[1])
    bd = ct.bodies
    for i in range(B):
        o = i if oR.shape[0] > 1 else 0
        _pose(q[i], oR[o], op[o], olink[o], fk, ct, use, R, p, BR, BP, bounds, GC, placed, OB)
        for j in range(P):
            a, b = ct.pairs.a[j], ct.pairs.b[j]
            lower = _bounding_gap(bounds, bd.radius, a, b)
            if lower <= cutoff and bd.s1[b] == bd.s0[b]:  # b only boxes: a's bounding sphere against each box
                lower = max(lower, _boxes_lower_bound(bounds, bd, ct.boxes, BR, BP, a, b))
            if lower <= cutoff:
                _placed(R, p, ct, C, placed, a, b)
            d = OVERLAP
            if lower <= cutoff and _refined(bd, a, b):  # exact on the parts; no next-closest pair beside it
                d, nxt[0] = _parts(ct, R, p, bounds, a, b, cutoff, -np.inf, G, idx, W, OB, xa, xb, n), 1e300
            if d == OVERLAP:  # (hulls that meet: the spheres' depth, conservative)
                d = lower if lower > cutoff else _pair(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b,
                                                       -1e300, cutoff, band, nxt)
            if d >= cutoff:  # not below the cutoff: a lower bound, and no gradient
                dist[i, j] = max(lower, cutoff)
                continue
            dist[i, j] = d
            if with_gradient:
                la, lb = _moving_link(bd.link[a], L, olink[o]), _moving_link(bd.link[b], L, olink[o])
                _add_velocity_row(R, p, la, xa, n, 1.0, jac, grad[i, j])
                _add_velocity_row(R, p, lb, xb, n, -1.0, jac, grad[i, j])
                if band > 0.0 and nxt[0] < min(cutoff, d + band):
                    dist2[i, j] = nxt[0]
                    _add_velocity_row(R, p, la, nxt[1:4], nxt[7:10], 1.0, jac, grad2[i, j])
                    _add_velocity_row(R, p, lb, nxt[4:7], nxt[7:10], -1.0, jac, grad2[i, j])
    return dist, grad, dist2, grad2


@njit(cache=True, nogil=True)
def clear_kernel(q, oR, op, olink, fk, ct, min_distance):
    """(B,) uint8: 1 where every pair j of q (B, n_dofs) is at least ``min_distance[j]`` [m] apart by the spheres
    (min_distance: (P,), one margin per pair); a configuration stops at its first pair found closer."""
    B, L = q.shape[0], fk.parent.shape[0]
    clear = np.ones(B, dtype=np.uint8)
    R, p, C, BR, BP, bounds, GC, xa, xb, n, lb_a, lb_b, placed = _scratch(L + oR.shape[1], ct)
    nxt = np.empty(NEXT_SIZE)
    G, idx, W, OB = _gjk_scratch(ct)
    use = _used(ct, fk.parent, oR.shape[1])
    bd = ct.bodies
    for i in range(B):
        o = i if oR.shape[0] > 1 else 0
        _pose(q[i], oR[o], op[o], olink[o], fk, ct, use, R, p, BR, BP, bounds, GC, placed, OB)
        for j in range(ct.pairs.a.shape[0]):
            a, b, m = ct.pairs.a[j], ct.pairs.b[j], min_distance[j]
            if _bounding_gap(bounds, bd.radius, a, b) >= m or (bd.s1[b] == bd.s0[b] and _boxes_lower_bound(
                    bounds, bd, ct.boxes, BR, BP, a, b) >= m):
                continue  # (b of boxes only: a's bounding sphere, or a's boxes, against b's boxes)
            if _refined(bd, a, b):  # OVERLAP (hulls meet) is below any margin
                d = _parts(ct, R, p, bounds, a, b, m, m, G, idx, W, OB, xa, xb, n)
            else:
                _placed(R, p, ct, C, placed, a, b)
                d = _pair_called(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, m, m, nxt)
            if d < m:
                clear[i] = 0
                break
    return (clear,)


NEAR_WANTED, APART_WANTED = 1, 2  # evidence_kernel's bits: is the pair ever within `near`, ever apart (> 0)?


@njit(cache=True, nogil=True)
def evidence_kernel(q, oR, op, olink, fk, ct, near, wanted):
    """Over the configurations q (B, n_dofs), for each pair the facts still ``wanted`` (P,) (bits NEAR_WANTED,
    APART_WANTED; 0: skipped): whether it is ever at most ``near`` [m] apart, whether ever apart (distance > 0).
    A pair stops being measured once its wanted facts are seen, and a measurement stops at the first sphere pair
    in contact: choosing pairs needs these facts, not the distances. Returns ((1, P) uint8 near, (1, P) uint8
    apart)."""
    B, L, P = q.shape[0], fk.parent.shape[0], ct.pairs.a.shape[0]
    seen_near = np.zeros((1, P), dtype=np.uint8)
    seen_apart = np.zeros((1, P), dtype=np.uint8)
    todo = wanted.copy()
    R, p, C, BR, BP, bounds, GC, xa, xb, n, lb_a, lb_b, placed = _scratch(L + oR.shape[1], ct)
    nxt = np.empty(NEXT_SIZE)
    G, idx, W, OB = _gjk_scratch(ct)
    use = _used(ct, fk.parent, oR.shape[1])
    bd = ct.bodies
    for i in range(B):
        o = i if oR.shape[0] > 1 else 0
        _pose(q[i], oR[o], op[o], olink[o], fk, ct, use, R, p, BR, BP, bounds, GC, placed, OB)
        for j in range(P):
            if todo[j] == 0:
                continue
            a, b = ct.pairs.a[j], ct.pairs.b[j]
            d = _bounding_gap(bounds, bd.radius, a, b)
            if d <= near:  # below 0 ends the search: in contact, and within near
                stop = near if todo[j] == NEAR_WANTED else 0.0
                if _refined(bd, a, b):
                    d = max(_parts(ct, R, p, bounds, a, b, near + 1e-9, stop, G, idx, W, OB, xa, xb, n), -1.0)
                else:
                    _placed(R, p, ct, C, placed, a, b)
                    d = _pair_called(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, stop, near, nxt)
            if d <= near and todo[j] & NEAR_WANTED:
                seen_near[0, j] = 1
                todo[j] -= NEAR_WANTED
            if d > 0.0 and todo[j] & APART_WANTED:
                seen_apart[0, j] = 1
                todo[j] -= APART_WANTED
    return seen_near, seen_apart
