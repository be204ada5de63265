"""Random valid configurations of a planning space (benchmarks, tests): arm by arm where a robot has several, as
a uniform sample of 12 DOFs is almost never clear for two arms over a table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.errors import InputError
from app.planning.space import PlanningSpace

BATCH = 64  # candidates checked per call


def arm_groups(space: PlanningSpace, ee_links: Sequence[str]) -> list[np.ndarray]:
    """For each end effector, the positions in the active vector of the planned DOFs that move it."""
    model = space.model
    groups = []
    for link in ee_links:
        li = model.link_index(link)
        groups.append(np.array([i for i, k in enumerate(space.dofs) if li in model.links_moved_by(int(k))]))
    return groups


def random_valid(space: PlanningSpace, rng: np.random.Generator, base: np.ndarray | None = None,
                 groups: Sequence[np.ndarray] | None = None, tries: int = 100,
                 box: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray | None:
    """A valid active configuration (n_active,), or None after ``tries`` batches. With ``groups``, each group's DOFs
    are drawn in turn with the others at ``base`` (n_active; default the space's held configuration) and then
    checked together. ``box``: (lower, upper) (n_active,) to draw from, inside the bounds (default the bounds)."""
    base = space.active(space.q_hold) if base is None else np.asarray(base, dtype=float)
    lo, hi = (space.lower, space.upper) if box is None else (np.maximum(box[0], space.lower), np.minimum(box[1], space.upper))
    groups = [np.arange(space.n_active)] if groups is None else list(groups)
    if not groups or any(len(g) == 0 for g in groups):
        raise InputError("every arm group needs at least one planned DOF")
    for _ in range(tries):
        q = base.copy()
        for g in groups:
            cand = np.repeat(base[None], BATCH, axis=0)
            cand[:, g] = rng.uniform(lo[g], hi[g], (BATCH, len(g)))
            ok = np.flatnonzero(space.valid(cand))
            if len(ok) == 0:
                break
            q[g] = cand[ok[0], g]
        else:
            if space.valid(q[None])[0]:
                return q
    return None
