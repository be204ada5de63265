"""Camera framing (pure numpy): where to put a camera so that every environment is in view."""

from __future__ import annotations

import numpy as np


def frame_environments(eye: np.ndarray, target: np.ndarray, fov_deg: float,
                       env_origins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The camera (eye, target) (3,) [m], given for one environment, moved back along its own line of sight
    so that the grid of ``env_origins`` (n, 3) fits the vertical field of view (unchanged for one env)."""
    eye, target = np.asarray(eye, dtype=float), np.asarray(target, dtype=float)
    if len(env_origins) <= 1:
        return eye, target
    lo, hi = env_origins.min(axis=0), env_origins.max(axis=0)
    span = float(np.max(hi - lo)) + 1.0
    direction = (eye - target) / np.linalg.norm(eye - target)
    distance = max(np.linalg.norm(eye - target), 0.5 * span / np.tan(np.radians(fov_deg) / 2) * 1.1)
    new_target = 0.5 * (lo + hi) + target
    return new_target + direction * distance, new_target
