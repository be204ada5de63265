"""The planning space: the DOFs being planned (the others held fixed), their bounds, and validity by our sphere
collision model (app.collision), one compiled call per batch of configurations.

Configurations here are *active* vectors (n_active,) unless a name says ``full`` (n_dofs,). An edge from qa to qb
is checked at ``resolution`` [rad or m]: consecutive checked configurations differ by at most that much in every
DOF (the infinity norm), all of them in one call of ``CollisionModel.clear``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from app.collision.checker import CollisionModel
from app.errors import InputError
from app.kinematics.model import KinematicModel

FIRST_PASS = 6  # configurations of an edge checked first, spread along it
UNLIMITED = np.pi  # [rad] window used for an unlimited (continuous) joint: one turn around the start


def planned_dofs(model: KinematicModel, dofs: Sequence[int] | None = None) -> np.ndarray:
    """The DOFs a plan moves: ``dofs`` checked (distinct indices into the model's DOF vector), or None: every
    revolute DOF, so a gripper's prismatic fingers stay still. Shape (n_active,)."""
    chosen = np.flatnonzero(model.revolute) if dofs is None else np.asarray(dofs, dtype=np.int64).reshape(-1)
    if len(chosen) == 0 or len(set(chosen.tolist())) != len(chosen) or chosen.min() < 0 or chosen.max() >= model.n_dofs:
        raise InputError(f"dofs_idx_local must be distinct DOF indices in [0, {model.n_dofs}), got {chosen.tolist()}")
    return chosen


class PlanningSpace:
    """The active DOFs of ``model`` with the rest held at ``q_hold``, checked by ``collision``.

    Attributes:
        dofs: Indices of the planned DOFs in the model's DOF vector. Shape (n_active,).
        lower, upper: Bounds of the planned DOFs [rad or m]. Shape (n_active,).
        resolution: Largest per-DOF step between checked configurations of an edge [rad or m].
        min_distance: Clearance every checked pair keeps by the spheres [m].
    """

    def __init__(self, model: KinematicModel, collision: CollisionModel, q_hold: np.ndarray,
                 dofs: Sequence[int] | None = None, resolution: float = 0.05, min_distance: float = 0.0,
                 ignore_collision: bool = False):
        """``q_hold`` (n_dofs,): values of the DOFs not planned (and the template of full vectors); ``dofs``:
        the planned DOFs (None: every revolute DOF, so a gripper's prismatic fingers stay still);
        ``ignore_collision``: validity is the bounds alone (Genesis's option)."""
        if not (np.isfinite(resolution) and resolution > 0):
            raise InputError(f"resolution must be a finite number > 0 [rad], got {resolution}")
        if not (np.isfinite(min_distance) and min_distance >= 0):
            raise InputError(f"min_distance must be a finite number >= 0 [m], got {min_distance}")
        self.model, self.collision = model, collision
        self.q_hold = model.check_q(q_hold, "q_hold").astype(float).copy()
        chosen = planned_dofs(model, dofs)
        self.dofs = chosen
        self.dofs.setflags(write=False)
        lo, hi = model.q_lower[chosen], model.q_upper[chosen]
        centre = self.q_hold[chosen]
        self.lower = np.where(np.isfinite(lo), lo, centre - UNLIMITED)
        self.upper = np.where(np.isfinite(hi), hi, centre + UNLIMITED)
        self.resolution, self.min_distance = float(resolution), float(min_distance)
        self.margins: float | np.ndarray = self.min_distance  # what valid() keeps: one for all, or (P,) per pair
        self.ignore_collision = bool(ignore_collision)
        self.checked = 0  # configurations checked so far (for reports)

    @property
    def n_active(self) -> int:
        return len(self.dofs)

    def full(self, q_active: np.ndarray) -> np.ndarray:
        """Full configurations (..., n_dofs) from active ones (..., n_active)."""
        q_active = np.asarray(q_active, dtype=float)
        out = np.broadcast_to(self.q_hold, q_active.shape[:-1] + (self.model.n_dofs,)).copy()
        out[..., self.dofs] = q_active
        return out

    def active(self, q_full: np.ndarray) -> np.ndarray:
        """The planned DOFs' values (..., n_active) of full configurations (..., n_dofs)."""
        return np.asarray(q_full, dtype=float)[..., self.dofs]

    def valid(self, q_active: np.ndarray, min_distance: float | None = None) -> np.ndarray:
        """Within the bounds and clear by ``min_distance`` (None: the space's ``margins``, ``min_distance`` for every
        pair unless set per pair) [m]: (..., n_active) -> (...) bool."""
        q = np.asarray(q_active, dtype=float)
        inside = ((q >= self.lower - 1e-9) & (q <= self.upper + 1e-9)).all(axis=-1)
        md = self.margins if min_distance is None else min_distance
        self.checked += int(np.prod(q.shape[:-1], dtype=np.int64))
        if self.ignore_collision:
            return inside
        return inside & self.collision.clear(self.full(q), md)

    def edge_configs(self, qa: np.ndarray, qb: np.ndarray, resolution: float | None = None) -> np.ndarray:
        """The configurations checked on the straight edge qa -> qb, both ends included: (k, n_active), k >= 2,
        consecutive rows differing by at most ``resolution`` (None: the space's) in every DOF."""
        res = self.resolution if resolution is None else resolution
        steps = max(1, int(np.ceil(np.abs(qb - qa).max() / res)))
        t = np.linspace(0.0, 1.0, steps + 1)[:, None]
        return qa + t * (qb - qa)

    def motion_valid(self, qa: np.ndarray, qb: np.ndarray, resolution: float | None = None) -> bool:
        """Whether the straight edge qa -> qb is valid at every checked configuration (ends included). A long
        edge is checked in two calls: a coarse subset spread along it first (most edges that collide fail
        there), then the rest."""
        configs = self.edge_configs(qa, qb, resolution)
        if len(configs) <= 2 * FIRST_PASS:
            return bool(self.valid(configs).all())
        coarse = np.zeros(len(configs), dtype=bool)
        coarse[np.linspace(0, len(configs) - 1, FIRST_PASS).round().astype(int)] = True
        return bool(self.valid(configs[coarse]).all() and self.valid(configs[~coarse]).all())

    def path_valid(self, path: np.ndarray, resolution: float | None = None) -> np.ndarray:
        """Per edge of ``path`` (N, n_active): valid at ``resolution``, all edges in one call. Shape (N - 1,)."""
        edges = [self.edge_configs(a, b, resolution) for a, b in itertools.pairwise(path)]
        if not edges:
            return np.zeros(0, dtype=bool)
        ok = self.valid(np.concatenate(edges))
        bounds = np.cumsum([0] + [len(e) for e in edges])
        return np.array([ok[s:e].all() for s, e in itertools.pairwise(bounds)])
