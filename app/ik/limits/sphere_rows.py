"""Distance rows from the link spheres (app.collision) instead of a simulator's closest points: every
environment's checked pairs (self, arm-arm, robot-world) in one compiled call, each environment's closest
``max_rows`` below the detection distance kept.

A sphere distance is a lower bound of the true distance of the shapes it encloses (by at most the pair's
excess), so a margin kept by these rows is kept by the real geometry too, with up to the excess to spare.

A pair's distance is that of its closest pair of spheres, whose gradient changes where another pair of spheres
takes over. A row with the closest pair's gradient alone let that other pair close unseen within a tick (two arms
pressing together came 1.2 mm closer in one 120 Hz tick than the row allowed, 0.24 mm inside d_safe by the
spheres), so a pair also gives a row for its next-closest pair of spheres (or sphere and box) within
NEXT_ROW_BAND of the closest: 10.59 mm kept instead of 9.76 mm there (d_safe 10 mm).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from app.collision.checker import CollisionModel
from app.collision.world import ObjectPoses
from app.ik.limits.distance import DistanceRows
from app.kernels.dispatch import entry_point

NEXT_ROW_BAND = 0.02  # [m] a pair's next-closest sphere pair this much farther than its closest gives a row too


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
        self._every = np.ones((0, collision.n_pairs), dtype=np.bool_)  # every pair watched (reused)
        self._select = None  # _select's compiled entry, once known (app.kernels.dispatch.entry_point)

    def __repr__(self) -> str:
        return f"SphereRows({self.collision.n_pairs} pairs, detection {self.detection_distance} m)"

    def rows(self, q: np.ndarray, skipped: Sequence[frozenset] | None = None,
             objects: ObjectPoses | None = None) -> DistanceRows:
        """Rows of every environment at q (n_envs, n_dofs), grouped by environment, closest first.

        Args:
            skipped: Per environment, (name a, name b) pairs left unwatched now (e.g. two grippers' fingers
                while they hand an object over); None: none.
            objects: The moving objects' poses now, one row per environment (needed when the model has objects).
        """
        d, grad, d_next, grad_next = self.collision.distances_and_next(q, NEXT_ROW_BAND, self.detection_distance,
                                                                      objects)
        args = (np.concatenate([d, d_next], axis=1), np.concatenate([grad, grad_next], axis=1),
                self._watched(len(d), skipped), self.detection_distance, self.max_rows)
        if self._select is None:  # then called directly: no per-call typing of its arguments
            self._select = entry_point(_select, args)
        env, pair, distance, normal, J_a, J_b = self._select(*args)
        return DistanceRows(distance, normal, J_a, J_b, PairNames(self.collision.pair_names, pair % d.shape[1]), env)

    def _watched(self, n_envs: int, skipped: Sequence[frozenset] | None) -> np.ndarray:
        """(n_envs, P) bool: the pairs watched in each environment (a shared all-true array when none is skipped)."""
        if len(self._every) != n_envs:
            self._every = np.ones((n_envs, self.collision.n_pairs), dtype=np.bool_)  # never written (copied)
        if not skipped or not any(skipped):
            return self._every
        watched = self._every.copy()
        for env, pairs in enumerate(skipped):
            for pair in pairs:
                k = self._index.get(tuple(pair))
                if k is not None:
                    watched[env, k] = False
        return watched


@njit(cache=True)
def _select(d, grad, watched, detection, max_rows):
    """Each environment's closest ``max_rows`` watched rows below ``detection`` with a nonzero gradient, closest
    first, environments ascending: env (K,), row index (K,) into d's columns, and the rows as
    DistanceRows.from_gradients stores them (distance (K,), normal e_x (K, 3), J_a with the gradient as its first
    row (K, 3, n), J_b zeros (K, 3, n)). d (B, R), grad (B, R, n): R = the pairs' closest rows then their next
    rows (R = P or 2 P), watched (B, P)."""
    B, R, n = grad.shape
    P = watched.shape[1]
    env, pair = np.empty(B * max_rows, dtype=np.int64), np.empty(B * max_rows, dtype=np.int64)
    K = 0
    for i in range(B):
        first = K
        for j in range(R):
            if not watched[i, j % P] or d[i, j] >= detection:
                continue
            moving = False
            for k in range(n):
                moving = moving or grad[i, j, k] != 0.0
            if not moving:  # no joint changes it: a row the QP could not meet
                continue
            # insertion into this environment's sorted list, at most max_rows long
            m = K - first
            if m == max_rows and d[i, j] >= d[i, pair[K - 1]]:
                continue
            at = K if m < max_rows else K - 1
            while at > first and d[i, pair[at - 1]] > d[i, j]:
                if at < first + max_rows:
                    pair[at] = pair[at - 1]
                at -= 1
            pair[at] = j
            if m < max_rows:
                K += 1
        for r in range(first, K):
            env[r] = i
    normal = np.zeros((K, 3))
    J_a = np.zeros((K, 3, n))
    distance = np.empty(K)
    for r in range(K):
        normal[r, 0] = 1.0
        J_a[r, 0] = grad[env[r], pair[r]]
        distance[r] = d[env[r], pair[r]]
    return env[:K].copy(), pair[:K].copy(), distance, normal, J_a, np.zeros((K, 3, n))


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
