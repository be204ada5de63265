"""Distance rows from the link spheres (app.collision) instead of a simulator's closest points: every
environment's checked pairs (self, arm-arm, robot-world) in one compiled call, each environment's closest
``max_rows`` below the detection distance kept.

A sphere distance is a lower bound of the true distance of the shapes it encloses (by at most the pair's
excess), so a margin kept by these rows is kept by the real geometry too, with up to the excess to spare.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.collision.checker import CollisionModel
from app.ik.limits.distance import DistanceRows


class SphereRows:
    """Rows of a CollisionModel's pairs for a batch of environments.

    Args:
        collision: The robot's spheres with the world (boxes in the base frame) and the pairs to watch.
        detection_distance: Pairs farther than this [m] give no row.
        max_rows: At most this many rows per environment (closest first).
    """

    def __init__(self, collision: CollisionModel, detection_distance: float = 0.15, max_rows: int = 10):
        self.collision = collision
        self.detection_distance, self.max_rows = float(detection_distance), int(max_rows)
        self._index = {pair: k for k, pair in enumerate(collision.pair_names)}
        self._index.update({(b, a): k for (a, b), k in list(self._index.items())})

    def __repr__(self) -> str:
        return f"SphereRows({self.collision.n_pairs} pairs, detection {self.detection_distance} m)"

    def rows(self, q: np.ndarray, skipped: Sequence[frozenset] | None = None) -> DistanceRows:
        """Rows of every environment at q (n_envs, n_dofs), grouped by environment, closest first.

        Args:
            skipped: Per environment, (name a, name b) pairs left unwatched now (e.g. two grippers' fingers
                while they hand an object over); None: none.
        """
        d, grad = self.collision.distances(q, with_gradient=True, cutoff=self.detection_distance)
        watched = (d < self.detection_distance) & (np.abs(grad).max(axis=2) > 0.0)  # a row needs a gradient
        for env, pairs in enumerate(skipped or ()):
            for pair in pairs:
                k = self._index.get(tuple(pair))
                if k is not None:
                    watched[env, k] = False
        masked = np.where(watched, d, np.inf)
        order = np.argsort(masked, axis=1, kind="stable")[:, :self.max_rows]
        env, col = np.nonzero(np.isfinite(np.take_along_axis(masked, order, axis=1)))  # env ascending
        pair = order[env, col]
        return DistanceRows.from_gradients(d[env, pair], grad[env, pair], PairNames(self.collision.pair_names, pair),
                                           env.astype(np.int64))


class PairNames(Sequence):
    """'a|b' names of sphere rows, formatted only when read (most ticks read none)."""

    def __init__(self, names: Sequence[tuple[str, str]], pair: np.ndarray):
        self._names, self._pair = names, pair

    def __len__(self) -> int:
        return len(self._pair)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        a, b = self._names[self._pair[k]]
        return f"{a}|{b}"


def merge_rows(first: DistanceRows, second: DistanceRows, max_rows: int) -> DistanceRows:
    """Two sets of rows of the same environments as one, grouped by environment, each environment's closest
    ``max_rows`` (rows without ``env`` are environment 0's)."""
    if len(second) == 0:
        return first
    if len(first) == 0:
        return second
    env = np.concatenate([_env(first), _env(second)])
    distance = np.concatenate([first.distance, second.distance])
    order = np.lexsort((distance, env))
    env_sorted = env[order]
    rank = np.arange(len(order)) - np.searchsorted(env_sorted, env_sorted)  # place within its environment
    keep = order[rank < max_rows]
    cat = lambda a, b: np.concatenate([a, b])[keep]  # noqa: E731
    labels = [*first.labels, *second.labels]
    return DistanceRows(distance[keep], cat(first.normal, second.normal), cat(first.J_a, second.J_a),
                        cat(first.J_b, second.J_b), [labels[k] for k in keep], env[keep])


def _env(rows: DistanceRows) -> np.ndarray:
    return np.zeros(len(rows), dtype=np.int64) if rows.env is None else rows.env.astype(np.int64)
