"""The bodies of a collision model packed into the compiled kernel's tables (app.collision.collision_tables).

A body is one side of a checked pair: a robot link, a world box or sphere, a moving or held object. It holds spheres
and boxes (what the sphere search measures) and, where its shapes are exactly convex, parts: each the convex hull of
a few vertices inflated by a radius (a mesh's hull, a box's corners, a sphere's centre, a capsule's ends), which GJK
measures exactly (app.collision._gjk). ``refine``: the body's spheres bulge enough (a mesh's cover) that a pair of
two bodies with parts, one of them refined, is measured on its parts wherever its spheres come within the margin.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.collision.collision_tables import (
    BodyTables,
    BoxSet,
    CollisionTables,
    GroupSet,
    PairTables,
    PartSet,
    SphereSet,
    frozen,
)
from app.collision.link_geometry import bounding_box
from app.errors import InputError

GROUP = 8  # spheres per group: the kernel skips a whole group when its bounding sphere cannot be closer


class Body(NamedTuple):
    """name; link: its frame (a link index, -1 the base, n_links + m moving object m); spheres (k, 4) and boxes
    [(R, p, half)] in that frame [m]; excess [m]: how far its spheres may reach beyond its shapes; parts
    [(vertices (v, 3), radius[, triangles (f, 3) of the hull or None])] (empty: none exact); refine: measure its
    pairs on the parts."""

    name: str
    link: int
    spheres: np.ndarray
    boxes: list
    excess: float
    parts: tuple = ()
    refine: bool = False


def box_part(R: np.ndarray, p: np.ndarray, half) -> tuple[np.ndarray, float, None]:
    """A box (frame R, p; half extents) as a part: its 8 corners, radius 0, no triangles (searched whole)."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    return (signs * np.asarray(half, dtype=float)) @ np.asarray(R).T + np.asarray(p), 0.0, None


def pack_tables(bodies: list[Body], pairs: list[tuple[int, int]]) -> CollisionTables:
    """The tables of ``bodies`` and the checked ``pairs`` (body indices); a pair's box body goes second, and two
    bodies with boxes must both hold boxes only (InputError otherwise)."""
    sl, sc, sr, bl, bR, bp, bh, s0, s1, k0, k1, cen, rad = ([] for _ in range(13))
    gs0, gs1, gl, gc, gr, g0, g1 = ([] for _ in range(7))
    pl, pv0, pv1, pr, verts, h0, h1, nbrs, obbs = ([] for _ in range(9))
    n_verts = 0
    for body in bodies:
        s0.append(len(sl)); k0.append(len(bl)); g0.append(len(gs0)); h0.append(len(pl))
        for group in _groups(body.spheres):
            gs0.append(len(sl)); gl.append(body.link)
            sl += [body.link] * len(group); sc += list(group[:, :3]); sr += list(group[:, 3])
            gs1.append(len(sl))
            c, r = _bounding(group, [])
            gc.append(c); gr.append(r)
        g1.append(len(gs0))
        for R, p, half in body.boxes:
            bl.append(body.link); bR.append(R); bp.append(p); bh.append(half)
        for vertices, radius, *faces in body.parts:
            nbrs += _neighbours(len(vertices), faces[0] if faces else None, n_verts)
            pl.append(body.link); pv0.append(n_verts); n_verts += len(vertices); pv1.append(n_verts)
            pr.append(radius); verts.append(np.asarray(vertices, dtype=float).reshape(-1, 3))
            R, c, half = bounding_box(verts[-1])
            centre = verts[-1].mean(axis=0)
            reach = min(np.linalg.norm(half), np.linalg.norm(verts[-1] - centre, axis=1).max())
            obbs.append((R, c, half + radius, c if np.linalg.norm(half) == reach else centre, reach + radius))
        s1.append(len(sl)); k1.append(len(bl)); h1.append(len(pl))
        c, r = _bounding(body.spheres, body.boxes)
        cen.append(c); rad.append(r)
    pairs = [(b, a) if k1[a] > k0[a] and k1[b] == k0[b] else (a, b) for a, b in pairs]
    mixed = [(bodies[a].name, bodies[b].name) for a, b in pairs if k1[a] > k0[a] and (s1[a] > s0[a] or s1[b] > s0[b])]
    if mixed:  # the kernel measures spheres against boxes and boxes against boxes, not a mix on both sides
        raise InputError(f"pairs of two bodies with boxes, one with spheres too, cannot be checked: {mixed[:3]}")
    i64 = np.int64
    return CollisionTables(
        SphereSet(frozen(sl, i64), frozen(np.reshape(sc, (-1, 3))), frozen(sr)),
        BoxSet(frozen(bl, i64), frozen(np.reshape(bR, (-1, 3, 3))), frozen(np.reshape(bp, (-1, 3))),
               frozen(np.reshape(bh, (-1, 3))), frozen(np.linalg.norm(np.reshape(bh, (-1, 3)), axis=1))),
        BodyTables(frozen(s0, i64), frozen(s1, i64), frozen(k0, i64), frozen(k1, i64),
                   frozen([b.link for b in bodies], i64), frozen(np.reshape(cen, (-1, 3))), frozen(rad),
                   frozen(g0, i64), frozen(g1, i64), frozen(h0, i64), frozen(h1, i64),
                   frozen([b.refine for b in bodies], np.uint8)),
        PairTables(frozen([a for a, _ in pairs], i64), frozen([b for _, b in pairs], i64)),
        GroupSet(frozen(gs0, i64), frozen(gs1, i64), frozen(gl, i64), frozen(np.reshape(gc, (-1, 3))), frozen(gr)),
        PartSet(frozen(pl, i64), frozen(pv0, i64), frozen(pv1, i64), frozen(pr),
                frozen(np.concatenate(verts) if verts else np.zeros((0, 3))),
                frozen(np.cumsum([0] + [len(n) for n in nbrs]), i64),
                frozen(np.concatenate(nbrs) if nbrs else np.zeros(0), i64),
                frozen(np.reshape([o[0] for o in obbs], (-1, 3, 3))), frozen(np.reshape([o[1] for o in obbs], (-1, 3))),
                frozen(np.reshape([o[2] for o in obbs], (-1, 3))), frozen(np.reshape([o[3] for o in obbs], (-1, 3))),
                frozen([o[4] for o in obbs])))


def _neighbours(n: int, faces, first: int) -> list[np.ndarray]:
    """Per vertex of a part its neighbours on the hull's edges (global vertex indices, from ``first``); none for a part
    without triangles (its support is found by visiting every vertex)."""
    if faces is None:
        return [np.zeros(0, dtype=np.int64)] * n
    faces = np.asarray(faces, dtype=np.int64)
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    edges = np.unique(np.sort(np.concatenate([edges, edges[:, ::-1]]), axis=1), axis=0)
    both = np.concatenate([edges, edges[:, ::-1]])
    both = both[np.argsort(both[:, 0], kind="stable")]  # grouped by vertex, each group in its order above
    return np.split(first + both[:, 1], np.cumsum(np.bincount(both[:, 0], minlength=n))[:-1])


def _groups(spheres: np.ndarray) -> list[np.ndarray]:
    """A body's spheres (k, 4) in groups of at most GROUP neighbours: sorted along their principal axis."""
    if len(spheres) <= GROUP:
        return [spheres] if len(spheres) else []
    centred = spheres[:, :3] - spheres[:, :3].mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    ordered = spheres[np.argsort(centred @ axis, kind="stable")]
    return np.array_split(ordered, int(np.ceil(len(spheres) / GROUP)))


def _bounding(spheres: np.ndarray, boxes) -> tuple[np.ndarray, float]:
    """A sphere (centre (3,), radius) around a body's spheres and boxes (not the smallest)."""
    pts = [spheres[:, :3]] + [p[None] for _, p, _ in boxes]
    allp = np.concatenate(pts) if pts else np.zeros((1, 3))
    centre = allp.mean(axis=0) if len(allp) else np.zeros(3)
    r = max([np.linalg.norm(s[:3] - centre) + s[3] for s in spheres]
            + [np.linalg.norm(p - centre) + np.linalg.norm(h) for _, p, h in boxes] + [0.0])
    return centre, float(r)
