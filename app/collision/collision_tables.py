"""The collision model as the compiled distance kernel takes it: named fields, not positions.

A *body* is what a checked pair names on each side: a robot link's spheres and boxes, a world box, or a
held object's spheres. Link index -1 means the model's base frame (world primitives, given there).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class SphereSet(NamedTuple):
    """S spheres. link (S,) int; centre (S, 3) in the link frame [m]; radius (S,) [m]."""

    link: np.ndarray
    centre: np.ndarray
    radius: np.ndarray


class BoxSet(NamedTuple):
    """K boxes. link (K,) int; R (K, 3, 3), p (K, 3): the box frame in the link frame; half (K, 3) [m];
    reach (K,): |half|, the radius of the box's bounding sphere [m]."""

    link: np.ndarray
    R: np.ndarray
    p: np.ndarray
    half: np.ndarray
    reach: np.ndarray


class BodyTables(NamedTuple):
    """N bodies: spheres [s0, s1) and boxes [k0, k1) of the sets above; link (N,); a bounding sphere each
    (centre (N, 3) in the link frame, radius (N,)) for the early-out; sphere groups [g0, g1); parts [h0, h1);
    refine (N,) uint8: its pairs with another body of parts are measured on the parts (app.collision.packing)."""

    s0: np.ndarray
    s1: np.ndarray
    k0: np.ndarray
    k1: np.ndarray
    link: np.ndarray
    centre: np.ndarray
    radius: np.ndarray
    g0: np.ndarray
    g1: np.ndarray
    h0: np.ndarray
    h1: np.ndarray
    refine: np.ndarray


class GroupSet(NamedTuple):
    """G groups of a few neighbouring spheres of one body: spheres [s0, s1), link (G,), a bounding sphere each
    (centre (G, 3) in the link frame, radius (G,)). Body j owns groups [BodyTables.g0[j], g1[j])."""

    s0: np.ndarray
    s1: np.ndarray
    link: np.ndarray
    centre: np.ndarray
    radius: np.ndarray


class PairTables(NamedTuple):
    """P checked pairs of bodies: a (P,), b (P,); body a holds boxes only where both hold boxes only."""

    a: np.ndarray
    b: np.ndarray


class PartSet(NamedTuple):
    """H exact convex parts: link (H,) int; vertices [v0, v1) of ``vertex`` (V, 3) in the link frame [m]; radius
    (H,) [m] the hull is inflated by; vertex v's neighbours on the hull's edges nbr[nbr0[v]:nbr0[v + 1]] (none: a
    part without triangles, searched whole); a box around each, radius included (R (H, 3, 3), p (H, 3) in the link
    frame, half (H, 3)): the separating axes between two parts' boxes bound their distance from below; a sphere
    around each, radius included (centre (H, 3) in the link frame, reach (H,)): the cheaper bound, tried first."""

    link: np.ndarray
    v0: np.ndarray
    v1: np.ndarray
    radius: np.ndarray
    vertex: np.ndarray
    nbr0: np.ndarray
    nbr: np.ndarray
    box_R: np.ndarray
    box_p: np.ndarray
    box_half: np.ndarray
    centre: np.ndarray
    reach: np.ndarray


class CollisionTables(NamedTuple):
    """Everything the distance kernel reads besides the kinematic tables."""

    spheres: SphereSet
    boxes: BoxSet
    bodies: BodyTables
    pairs: PairTables
    groups: GroupSet
    parts: PartSet


def frozen(arr, dtype=float) -> np.ndarray:
    """A contiguous read-only copy."""
    out = np.ascontiguousarray(arr, dtype=dtype).copy()
    out.setflags(write=False)
    return out
