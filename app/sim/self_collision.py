"""Contacts between the arms of one body (a rig of several arms, or a one-file two-arm robot): PyBullet loads the
body with self-collision and every pair of its links is then filtered out except the pairs given (one link of
each arm), so two arms touch as two robots would while each arm's own links (adjacent, the gripper's carriages)
keep ignoring each other as they do in a body without self-collision."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import pybullet as pb

SELF_COLLISION_FLAGS = pb.URDF_USE_SELF_COLLISION


def keep_only_pairs(client: int, body: int, link_index: Mapping[str, int],
                    pairs: Collection[tuple[str, str]]) -> None:
    """Disable self-contacts of ``body`` between every two of its links (name -> PyBullet index) except ``pairs``
    (link names, either order)."""
    keep = {frozenset((link_index[a], link_index[b])) for a, b in pairs}
    idx = sorted(link_index.values())
    for i, a in enumerate(idx):
        for b in idx[i + 1:]:
            if frozenset((a, b)) not in keep:
                pb.setCollisionFilterPair(body, body, a, b, 0, physicsClientId=client)
