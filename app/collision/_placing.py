"""A configuration's placing for the distance kernels (app.collision._distance_kernels): what the checked pairs read
(_used), the link frames above it (FK of those links only), the objects' frames, and the bodies' boxes, bounding
centres, sphere groups and parts in the base frame; sphere centres only as a pair needs them (_placed).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.collision._gjk import place_parts
from app.kinematics._fk_kernels import frames_rows


@njit(cache=True, nogil=True, inline="always")
def _to_base(R, p, link, local, i, out):
    """Point local[i] (3,) of ``link`` (-1: the base) in the base frame, into out[i] (3,) (scalar loops: a call per
    point with array views cost ~40x the arithmetic)."""
    x, y, z = local[i, 0], local[i, 1], local[i, 2]
    if link < 0:
        out[i, 0], out[i, 1], out[i, 2] = x, y, z
        return
    for r in range(3):
        out[i, r] = p[link, r] + R[link, r, 0] * x + R[link, r, 1] * y + R[link, r, 2] * z


@njit(cache=True, nogil=True)
def _place(R, p, ct, used, BR, BP, bounds, GC):
    """For the bodies ``used`` (N,) by the checked pairs: box frames BR (K, 3, 3), BP (K, 3), bounding centres
    (N, 3) and group centres GC (G, 3) in the base frame; the sphere centres only as a pair needs them (_placed)."""
    bx, bd, gr = ct.boxes, ct.bodies, ct.groups
    for j in range(bd.link.shape[0]):
        if not used[j]:
            continue
        l = bd.link[j]
        _to_base(R, p, l, bd.centre, j, bounds)
        for g in range(bd.g0[j], bd.g1[j]):
            _to_base(R, p, l, gr.centre, g, GC)
        for k in range(bd.k0[j], bd.k1[j]):
            _to_base(R, p, l, bx.p, k, BP)
            for r in range(3):
                for c in range(3):
                    BR[k, r, c] = bx.R[k, r, c] if l < 0 else (R[l, r, 0] * bx.R[k, 0, c] + R[l, r, 1] * bx.R[k, 1, c]
                                                               + R[l, r, 2] * bx.R[k, 2, c])


@njit(cache=True, nogil=True)
def _used(ct, parent, n_objects):
    """What the checked pairs read: per body whether a pair names it (N,) uint8, and the link frames to compute
    (increasing): the used bodies' links with every link above them; every link where moving objects come (an
    object's pose is given in any link's frame)."""
    bd, L = ct.bodies, parent.shape[0]
    used = np.zeros(bd.link.shape[0], dtype=np.uint8)
    need = np.zeros(L, dtype=np.uint8)
    for j in range(ct.pairs.a.shape[0]):
        used[ct.pairs.a[j]] = 1
        used[ct.pairs.b[j]] = 1
    for j in range(used.shape[0]):
        if used[j] and 0 <= bd.link[j] < L:
            need[bd.link[j]] = 1
    if n_objects > 0:
        need[:] = 1
    for i in range(L - 1, 0, -1):  # a parent's index is below its child's
        if need[i]:
            need[parent[i]] = 1
    return used, np.flatnonzero(need)


@njit(cache=True, nogil=True, inline="always")
def _placed(R, p, ct, C, placed, a, b):
    """The sphere centres of bodies a and b in C, placed where not yet done for this configuration."""
    sp, bd = ct.spheres, ct.bodies
    for body in (a, b):
        if placed[body]:
            continue
        placed[body] = 1
        for s in range(bd.s0[body], bd.s1[body]):
            _to_base(R, p, sp.link[s], sp.centre, s, C)


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
def _pose(qi, oR, op, olink, fk, ct, use, R, p, BR, BP, bounds, GC, placed, OB):
    """One configuration qi (n_dofs,) with its objects' poses (_objects): the frames the pairs read (use: _used),
    their boxes, bounding centres and parts placed (_place, place_parts), no sphere yet."""
    frames_rows(qi, fk, use[1], R, p)
    _objects(R, p, fk.parent.shape[0], oR, op, olink)
    _place(R, p, ct, use[0], BR, BP, bounds, GC)
    place_parts(ct.parts, ct.bodies, use[0], R, p, OB)
    placed[:] = 0
