"""Feature statistics as LeRobot keeps them: per episode, and aggregated over episodes.

Each feature has min, max, mean, std (population), count and the quantiles q01, q10, q50, q90, q99. Vector
features reduce over frames (shape (d,)); camera features reduce over sampled frames, height and width per
channel, scaled to [0, 1] (shape (3, 1, 1)), like lerobot's ``compute_episode_stats``. Quantiles are the
inverted CDF (the smallest value with at least q of the samples at or below it), the definition lerobot's
histogram estimate approximates; the two agree to its bin width (1/5000 of the range).
"""

from __future__ import annotations

import numpy as np

QUANTILES = {"q01": 0.01, "q10": 0.10, "q50": 0.50, "q90": 0.90, "q99": 0.99}
STAT_KEYS = ("min", "max", "mean", "std", "count", *QUANTILES)
MAX_IMAGE_SIDE = 300  # frames larger than this are subsampled to ~150 px before their stats, as lerobot does
IMAGE_TARGET_SIDE = 150


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """Stats of ``values`` (n_frames,) or (n_frames, d) over frames; min/max keep the dtype (ints stay ints)."""
    values = np.asarray(values)
    flat = values.reshape(len(values), -1)
    as_float = flat.astype(np.float64)
    stats = {"min": flat.min(axis=0), "max": flat.max(axis=0), "mean": as_float.mean(axis=0),
             "std": as_float.std(axis=0), "count": np.array([len(values)], dtype=np.int64)}
    for key, q in QUANTILES.items():
        stats[key] = np.quantile(as_float, q, axis=0, method="inverted_cdf")
    return stats


def sample_frame_indices(n_frames: int) -> np.ndarray:
    """Which frames feed an episode's image stats: lerobot's heuristic (all up to 100, then n^0.75, at most
    10,000), evenly spread."""
    n_samples = max(min(100, n_frames), min(int(n_frames ** 0.75), 10_000))
    return np.round(np.linspace(0, n_frames - 1, n_samples)).astype(int)


def _level_stats(counts: np.ndarray) -> dict[str, float]:
    """Stats of samples given as counts per level 0..255 (exact; the inverted-CDF quantiles as above)."""
    levels = np.arange(256, dtype=np.float64)
    total = counts.sum()
    mean = float(counts @ levels) / total
    cumulative = np.cumsum(counts)
    present = np.flatnonzero(counts)
    out = {"min": levels[present[0]], "max": levels[present[-1]], "mean": mean,
           "std": float(np.sqrt(counts @ (levels - mean) ** 2 / total))}
    for key, q in QUANTILES.items():
        out[key] = levels[np.searchsorted(cumulative, q * total)]
    return out


def image_stats(frames: np.ndarray) -> dict[str, np.ndarray]:
    """Per-channel stats of RGB ``frames`` (n, h, w, 3) uint8 in [0, 1]; each stat has shape (3, 1, 1).
    Computed from each channel's histogram of the 256 levels: exact, and far cheaper than sorting pixels."""
    sampled = frames[sample_frame_indices(len(frames))]
    h, w = sampled.shape[1:3]
    if max(h, w) >= MAX_IMAGE_SIDE:
        step = int(max(h, w) / IMAGE_TARGET_SIDE)
        sampled = sampled[:, ::step, ::step]
    per_channel = [_level_stats(np.bincount(sampled[..., c].ravel(), minlength=256)) for c in range(3)]
    stats = {k: np.array([ch[k] for ch in per_channel]).reshape(3, 1, 1) / 255.0 for k in per_channel[0]}
    stats["count"] = np.array([len(sampled)], dtype=np.int64)
    return {k: stats[k] for k in STAT_KEYS}


def aggregate(stats_list: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One feature's stats over episodes: count-weighted mean, pooled variance, extreme min/max, count-weighted
    quantiles (lerobot's ``aggregate_feature_stats`` rule)."""
    counts = np.array([s["count"][0] for s in stats_list], dtype=np.float64)
    shape = (-1,) + (1,) * np.ndim(stats_list[0]["mean"])
    weights = (counts / counts.sum()).reshape(shape)
    means = np.stack([s["mean"] for s in stats_list])
    mean = (means * weights).sum(axis=0)
    variance = ((np.stack([s["std"] for s in stats_list]) ** 2 + (means - mean) ** 2) * weights).sum(axis=0)
    out = {"min": np.min(np.stack([s["min"] for s in stats_list]), axis=0),
           "max": np.max(np.stack([s["max"] for s in stats_list]), axis=0),
           "mean": mean, "std": np.sqrt(variance), "count": np.array([int(counts.sum())], dtype=np.int64)}
    for key in QUANTILES:
        out[key] = (np.stack([s[key] for s in stats_list]) * weights).sum(axis=0)
    return out


def to_json(stats: dict[str, dict[str, np.ndarray]]) -> dict:
    """Feature -> stat -> nested lists (the form of ``meta/stats.json``)."""
    return {feature: {k: np.asarray(v).tolist() for k, v in per.items()} for feature, per in stats.items()}
