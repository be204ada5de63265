"""PyBullet's distances between a loaded robot's links (and boxes) for the sphere model's pairs."""

from __future__ import annotations

import numpy as np
import pybullet as pb

from tests.pb_truth import set_config

FAR = 5.0  # [m] query distance: every pair reports its closest points


def add_box(client: int, half, pos, quat_wxyz=(1.0, 0.0, 0.0, 0.0)) -> int:
    shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(half), physicsClientId=client)
    w, x, y, z = quat_wxyz
    return pb.createMultiBody(0, shape, -1, list(pos), [x, y, z, w], physicsClientId=client)


def true_distances(client: int, body, model, cm, q: np.ndarray, boxes: dict[str, int]) -> np.ndarray:
    """PyBullet's signed distance of each of ``cm``'s pairs at configuration q (n_dofs,). Shape (P,)."""
    set_config(client, body, model, q)
    pb.performCollisionDetection(physicsClientId=client)
    out = np.empty(cm.n_pairs)
    for k, (a, b) in enumerate(cm.pair_names):
        if b in boxes:
            pts = pb.getClosestPoints(body.body_id, boxes[b], FAR, body.link_index[a], -1, physicsClientId=client)
        else:
            pts = pb.getClosestPoints(body.body_id, body.body_id, FAR, body.link_index[a], body.link_index[b],
                                      physicsClientId=client)
        out[k] = min(p[8] for p in pts)
    return out
