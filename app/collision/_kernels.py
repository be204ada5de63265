"""Compiled signed distances between bodies of spheres and boxes, and their gradients in joint space.

One call takes a batch of configurations; each is independent (run over threads by app.threads.chunked).
Conventions: a pair's distance is the smallest over its sphere-sphere and sphere-box distances (negative:
penetration); its gradient row is d(distance)/dq = n . (v_a - v_b), n the unit normal from b's witness to
a's, v the linear velocity of each witness point per unit joint speed (rows 0-2 of the project's geometric
Jacobian, base frame).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.kinematics._kernels import frames_one

# the next-closest sphere pair of a body pair (_pair): [0] distance, [1:4] [4:7] witnesses, [7:10] normal,
# [10:12] the closest pair's sphere indices, [12:21] scratch
NEXT_SIZE = 21


@njit(cache=True, nogil=True)
def _to_base(R, p, link, local, out):
    """Point ``local`` (3,) of ``link`` (-1: the base) in the base frame, into out (3,)."""
    if link < 0:
        out[:] = local
        return
    for r in range(3):
        out[r] = p[link, r] + R[link, r, 0] * local[0] + R[link, r, 1] * local[1] + R[link, r, 2] * local[2]


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
def _box_gap(C, s, BR, BP, half, k):
    """The signed distance of _box_distance alone (no normal): what the searches compare."""
    e0, e1, e2 = C[s, 0] - BP[k, 0], C[s, 1] - BP[k, 1], C[s, 2] - BP[k, 2]
    q0 = abs(BR[k, 0, 0] * e0 + BR[k, 1, 0] * e1 + BR[k, 2, 0] * e2) - half[k, 0]
    q1 = abs(BR[k, 0, 1] * e0 + BR[k, 1, 1] * e1 + BR[k, 2, 1] * e2) - half[k, 1]
    q2 = abs(BR[k, 0, 2] * e0 + BR[k, 1, 2] * e1 + BR[k, 2, 2] * e2) - half[k, 2]
    o0, o1, o2 = max(q0, 0.0), max(q1, 0.0), max(q2, 0.0)
    out2 = o0 * o0 + o1 * o1 + o2 * o2
    return np.sqrt(out2) if out2 > 0.0 else max(q0, q1, q2)


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


@njit(cache=True, nogil=True)
def _to_base_rows(R, p, link, local, out):
    """Points local[i] (n, 3) of links link[i] (-1: the base) into out[i] (n, 3), base frame (scalar loops:
    a call per point with array views cost ~40x the arithmetic)."""
    for i in range(link.shape[0]):
        l = link[i]
        x, y, z = local[i, 0], local[i, 1], local[i, 2]
        if l < 0:
            out[i, 0], out[i, 1], out[i, 2] = x, y, z
            continue
        for r in range(3):
            out[i, r] = p[l, r] + R[l, r, 0] * x + R[l, r, 1] * y + R[l, r, 2] * z


@njit(cache=True, nogil=True)
def _place(R, p, ct, C, BR, BP, bounds, GC):
    """Box frames BR (K, 3, 3), BP (K, 3), body bounding centres (N, 3) and group centres GC (G, 3) in the base
    frame; the sphere centres C (S, 3) only as a pair needs them (_placed)."""
    sp, bx, bd = ct.spheres, ct.boxes, ct.bodies
    _to_base_rows(R, p, ct.groups.link, ct.groups.centre, GC)
    for k in range(bx.link.shape[0]):
        l = bx.link[k]
        _to_base(R, p, l, bx.p[k], BP[k])
        for r in range(3):
            for c in range(3):
                BR[k, r, c] = bx.R[k, r, c] if l < 0 else (R[l, r, 0] * bx.R[k, 0, c] + R[l, r, 1] * bx.R[k, 1, c]
                                                           + R[l, r, 2] * bx.R[k, 2, c])
    _to_base_rows(R, p, bd.link, bd.centre, bounds)


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
    if bd.k1[b] > bd.k0[b]:  # b's boxes (a pair never holds boxes on side a: CollisionModel orders it so)
        best = _spheres_boxes(ct, C, BR, BP, GC, a, b, best, xa, xb, n, lb_b[:3], lb_a, stop, cap, band, nxt)
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
            low[v] = _box_gap(GC, g0 + v, BR, BP, bx.half, k) - gp.radius[g0 + v]
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
                d = _box_gap(C, s, BR, BP, bx.half, k) - sp.radius[s]
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


@njit(cache=True, nogil=True, inline="always")
def _placed(R, p, ct, C, placed, a, b):
    """The sphere centres of bodies a and b in C, placed where not yet done for this configuration."""
    sp, bd = ct.spheres, ct.bodies
    for body in (a, b):
        if placed[body]:
            continue
        placed[body] = 1
        for s in range(bd.s0[body], bd.s1[body]):
            l = sp.link[s]
            x, y, z = sp.centre[s, 0], sp.centre[s, 1], sp.centre[s, 2]
            if l < 0:
                C[s, 0], C[s, 1], C[s, 2] = x, y, z
                continue
            for r in range(3):
                C[s, r] = p[l, r] + R[l, r, 0] * x + R[l, r, 1] * y + R[l, r, 2] * z


@njit(cache=True, nogil=True, inline="always")
def _boxes_lower_bound(bounds, a, radius, BR, BP, half, k0, k1, normal):
    """A lower bound of the distance from body a (its bounding sphere: centre bounds[a], radius) to boxes
    [k0, k1): the box distance of the centre less the radius (the box distance is 1-Lipschitz); normal: scratch."""
    low = 1e300
    for k in range(k0, k1):
        low = min(low, _box_gap(bounds, a, BR, BP, half, k) - radius)
    return low


@njit(cache=True, nogil=True)
def _scratch(L, ct):
    """The per-call buffers of the kernels below: link frames R (L, 3, 3), p (L, 3); sphere centres C, box
    frames BR, BP, body bounds and group centres in the base frame; witnesses xa, xb, n (3,); the per-sphere
    lower bounds lb_a, lb_b (as long as the largest body's sphere count); and per body whether its sphere centres
    are placed for the current configuration (N,) uint8."""
    S, K, N, G = ct.spheres.link.shape[0], ct.boxes.link.shape[0], ct.bodies.link.shape[0], ct.groups.link.shape[0]
    bd = ct.bodies
    most = 3  # at least 3: lb_b doubles as a normal buffer in the sphere-box loop
    for j in range(bd.s0.shape[0]):
        most = max(most, bd.s1[j] - bd.s0[j])
    return (np.empty((L, 3, 3)), np.empty((L, 3)), np.empty((S, 3)), np.empty((K, 3, 3)), np.empty((K, 3)),
            np.empty((N, 3)), np.empty((G, 3)), np.empty(3), np.empty(3), np.empty(3), np.empty(most), np.empty(most),
            np.zeros(N, dtype=np.uint8))


@njit(cache=True, nogil=True)
def _objects(R, p, L, oR, op, olink):
    """The moving objects' frames R[L + m], p[L + m] in the base frame from their poses oR (M, 3, 3), op (M, 3)
    in the frames of links olink (M,) (-1: the base), after the link frames R[:L], p[:L]."""
    for m in range(oR.shape[0]):
        l, f = olink[m], L + m
        if l < 0:
            R[f] = oR[m]
            p[f] = op[m]
            continue
        for r in range(3):
            p[f, r] = p[l, r] + R[l, r, 0] * op[m, 0] + R[l, r, 1] * op[m, 1] + R[l, r, 2] * op[m, 2]
            for c in range(3):
                R[f, r, c] = R[l, r, 0] * oR[m, 0, c] + R[l, r, 1] * oR[m, 1, c] + R[l, r, 2] * oR[m, 2, c]


@njit(cache=True, nogil=True)
def _pose(qi, oR, op, olink, fk, ct, R, p, C, BR, BP, bounds, GC, placed):
    """One configuration qi (n_dofs,) with its objects' poses (_objects): link and object frames, boxes and
    bounding centres placed (_place), no sphere yet."""
    frames_one(qi, fk, R, p)
    _objects(R, p, fk.parent.shape[0], oR, op, olink)
    _place(R, p, ct, C, BR, BP, bounds, GC)
    placed[:] = 0


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
    bd = ct.bodies
    for i in range(B):
        o = i if oR.shape[0] > 1 else 0
        _pose(q[i], oR[o], op[o], olink[o], fk, ct, R, p, C, BR, BP, bounds, GC, placed)
        for j in range(P):
            a, b = ct.pairs.a[j], ct.pairs.b[j]
            lower = _bounding_gap(bounds, bd.radius, a, b)
            if lower <= cutoff and bd.s1[b] == bd.s0[b]:  # b only boxes: a's bounding sphere against each box
                lower = max(lower, _boxes_lower_bound(bounds, a, bd.radius[a], BR, BP, ct.boxes.half, bd.k0[b],
                                                      bd.k1[b], n))
            if lower <= cutoff:
                _placed(R, p, ct, C, placed, a, b)
            d = lower if lower > cutoff else _pair(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, -1e300,
                                                   cutoff, band, nxt)
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
    """(B,) uint8: 1 where every pair of q (B, n_dofs) is at least ``min_distance`` [m] apart by the spheres;
    a configuration stops at its first pair found closer."""
    B, L = q.shape[0], fk.parent.shape[0]
    clear = np.ones(B, dtype=np.uint8)
    R, p, C, BR, BP, bounds, GC, xa, xb, n, lb_a, lb_b, placed = _scratch(L + oR.shape[1], ct)
    nxt = np.empty(NEXT_SIZE)
    bd = ct.bodies
    for i in range(B):
        o = i if oR.shape[0] > 1 else 0
        _pose(q[i], oR[o], op[o], olink[o], fk, ct, R, p, C, BR, BP, bounds, GC, placed)
        for j in range(ct.pairs.a.shape[0]):
            a, b = ct.pairs.a[j], ct.pairs.b[j]
            if _bounding_gap(bounds, bd.radius, a, b) >= min_distance:
                continue
            _placed(R, p, ct, C, placed, a, b)
            d = _pair_called(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, min_distance, min_distance, nxt)
            if d < min_distance:
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
    bd = ct.bodies
    for i in range(B):
        o = i if oR.shape[0] > 1 else 0
        _pose(q[i], oR[o], op[o], olink[o], fk, ct, R, p, C, BR, BP, bounds, GC, placed)
        for j in range(P):
            if todo[j] == 0:
                continue
            a, b = ct.pairs.a[j], ct.pairs.b[j]
            d = _bounding_gap(bounds, bd.radius, a, b)
            if d <= near:  # below 0 ends the search: in contact, and within near
                _placed(R, p, ct, C, placed, a, b)
                stop = near if todo[j] == NEAR_WANTED else 0.0
                d = _pair_called(ct, C, BR, BP, bounds, GC, a, b, xa, xb, n, lb_a, lb_b, stop, near, nxt)
            if d <= near and todo[j] & NEAR_WANTED:
                seen_near[0, j] = 1
                todo[j] -= NEAR_WANTED
            if d > 0.0 and todo[j] & APART_WANTED:
                seen_apart[0, j] = 1
                todo[j] -= APART_WANTED
    return seen_near, seen_apart
