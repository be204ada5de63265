"""How close a path comes: the smallest sphere distance along joint configurations, to the world and within
the robot, with the world's closest pair (for reports)."""

from __future__ import annotations

import numpy as np

from app.collision.checker import CollisionModel


def path_clearance(collision: CollisionModel, q: np.ndarray) -> dict:
    """Over the joints q (K, n_dofs): ``clearance_world_min_m`` (the table, boxes, a held object),
    ``clearance_self_min_m`` (links of one arm), ``clearance_arms_min_m`` (two arms) [m] by the spheres (a lower
    bound of the true distance; None where there is no such pair) and ``closest_world_pair``."""
    d, _ = collision.distances(np.asarray(q, dtype=float), with_gradient=False)
    d = d.reshape(-1, collision.n_pairs)
    kinds = np.array(collision.pair_kinds)
    out: dict = {}
    for kind in ("world", "self", "arms"):
        cols = np.flatnonzero(kinds == kind)
        out[f"clearance_{kind}_min_m"] = float(d[:, cols].min()) if len(cols) and len(d) else None
    world = np.flatnonzero(kinds == "world")
    if len(world) and len(d):
        k = world[np.argmin(d[:, world].min(axis=0))]
        out["closest_world_pair"] = list(collision.pair_names[k])
    return out
