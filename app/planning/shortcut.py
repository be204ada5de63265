"""Path post-processing: random shortcutting over the planning space's edge checks, resampling to a given number
of waypoints (Genesis's ``num_waypoints``) and path length."""

from __future__ import annotations

import numpy as np

from app.planning.space import PlanningSpace


def path_length(path: np.ndarray) -> float:
    """Sum of the Euclidean joint-space lengths of the edges of ``path`` (N, n) [rad]."""
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) if len(path) > 1 else 0.0


def drop_collinear(path: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Waypoints that lie on the straight line between their neighbours removed (the motion is the same)."""
    keep = [0]
    for i in range(1, len(path) - 1):
        a, b, c = path[keep[-1]], path[i], path[i + 1]
        ab, ac = b - a, c - a
        t = float(ab @ ac / max(ac @ ac, 1e-300))
        if not (0.0 <= t <= 1.0 and np.linalg.norm(ab - t * ac) <= tol):
            keep.append(i)
    keep.append(len(path) - 1)
    return path[keep]


def shortcut(space: PlanningSpace, path: np.ndarray, attempts: int = 60, seed: int = 0) -> np.ndarray:
    """A shorter path with the same ends: greedy from the start (the farthest waypoint reachable in a straight
    line), then ``attempts`` random pairs of points on the path joined where the edge between them is valid.

    Args:
        path: (N, n_active) valid waypoints; each edge valid at the space's resolution.
    Returns:
        (M, n_active), M <= N + 2 * attempts; every new edge checked at the space's resolution.
    """
    path = _greedy(space, np.asarray(path, dtype=float))
    rng = np.random.default_rng(seed)
    for _ in range(attempts):
        if len(path) < 3:
            break
        seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        s1, s2 = np.sort(rng.uniform(0.0, cum[-1], 2))
        i, j = np.searchsorted(cum, s1, side="right") - 1, np.searchsorted(cum, s2, side="right") - 1
        if j <= i:  # both on one edge: nothing to gain
            continue
        a, b = _point(path, cum, i, s1), _point(path, cum, j, s2)
        if np.linalg.norm(b - a) >= s2 - s1 - 1e-9 or not space.motion_valid(a, b):
            continue
        path = np.concatenate([path[:i + 1], a[None], b[None], path[j + 1:]])
    return drop_collinear(path)


def _point(path: np.ndarray, cum: np.ndarray, i: int, s: float) -> np.ndarray:
    t = (s - cum[i]) / max(cum[i + 1] - cum[i], 1e-300)
    return path[i] + min(max(t, 0.0), 1.0) * (path[i + 1] - path[i])


def _greedy(space: PlanningSpace, path: np.ndarray) -> np.ndarray:
    """From each kept waypoint, the farthest later one joined directly (tried from the far end, halving)."""
    out, i = [path[0]], 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and not space.motion_valid(path[i], path[j]):
            j = i + 1 + (j - i - 1) // 2
        out.append(path[j])
        i = j
    return np.array(out)


def resample(path: np.ndarray, num_waypoints: int) -> np.ndarray:
    """``num_waypoints`` points along ``path`` (N, n), ends kept. With num_waypoints >= N every waypoint of
    ``path`` is kept (the motion stays on its edges) and the others are spread over the edges by their length;
    with fewer, points evenly spaced by arc length (corners may be cut: check the result)."""
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    if len(path) < 2 or seg.sum() <= 0.0:
        return np.repeat(path[:1], num_waypoints, axis=0)
    if num_waypoints < len(path):
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        s = np.linspace(0.0, cum[-1], num_waypoints)
        idx = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, len(path) - 2)
        t = np.clip((s - cum[idx]) / np.maximum(seg[idx], 1e-300), 0.0, 1.0)[:, None]
        out = path[idx] + t * (path[idx + 1] - path[idx])
        out[-1] = path[-1]
        return out
    share = seg / seg.sum() * (num_waypoints - len(path))
    extra = np.floor(share).astype(int)
    extra[np.argsort(extra - share)[: num_waypoints - len(path) - extra.sum()]] += 1
    pieces = [path[i] + np.linspace(0.0, 1.0, k + 2)[:-1, None] * (path[i + 1] - path[i])
              for i, k in enumerate(extra)]
    return np.concatenate(pieces + [path[-1:]])
