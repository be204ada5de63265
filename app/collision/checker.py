"""CollisionModel: signed distances and their joint-space gradients for every checked pair (robot self
pairs, robot-world, held object, moving objects), for a batch of configurations in one compiled call."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence

import numpy as np

from app.collision._distance_kernels import APART_WANTED, NEAR_WANTED, clear_kernel, distances_kernel, evidence_kernel
from app.collision.collision_tables import CollisionTables, PairTables, frozen
from app.collision.packing import Body, box_part, pack_tables
from app.collision.robot_spheres import RobotSpheres
from app.collision.world import ObjectPoses, World, box_frame, held_spheres, sphere_row
from app.errors import InputError
from app.kernels.dispatch import MIN_CHUNK, chunked, entry_point
from app.kinematics.model import KinematicModel
from app.validation import as_float_array

MAX_CLEARANCE = 1.0  # [m]: a clearance asked of an arm's links; beyond it nothing the arm reaches could be clear


class CollisionModel:
    """A robot's spheres and boxes plus a world, ready for the distance kernel.

    Attributes:
        pair_names: ``(a, b)`` names of each checked pair (robot links, world objects, the held object).
        pair_excess: excess_a + excess_b [m] per pair: the sphere distance is at most this below the true one.
    """

    def __init__(self, model: KinematicModel, robot: RobotSpheres, world: World | None = None,
                 self_pairs: Sequence[tuple[str, str]] | None = None):
        """``self_pairs``: the robot's link pairs to check (None: the sampled ones, ``robot.pairs``); a pair
        naming a link without collision geometry is left out (nothing of it can touch)."""
        self.model, self.robot, self.world = model, robot, world or World()
        self._bodies: list[Body] = []
        for name in model.link_names:
            if name in robot.spheres or name in robot.boxes:
                parts = tuple(robot.parts.get(name, ()))
                self._bodies.append(Body(name, model.link_index(name), robot.spheres.get(name, np.zeros((0, 4))),
                                         robot.boxes.get(name, []), robot.excess.get(name, 0.0), parts,
                                         bool(parts) and name in robot.refine))
        index = {b[0]: i for i, b in enumerate(self._bodies)}
        chosen = robot.pairs if self_pairs is None else self_pairs
        pairs = [(index[a], index[b]) for a, b in chosen if a in index and b in index and a != b]
        pairs += self._world_bodies(index)
        self._pairs = pairs
        self._memo: dict = {}  # per pair set: subsets per mask (bytes), moved_by per DOF groups
        self.pair_names = tuple((self._bodies[a][0], self._bodies[b][0]) for a, b in pairs)
        self.pair_excess = np.array([self._bodies[a][4] + self._bodies[b][4] for a, b in pairs])
        self.tables = self._tables(pairs)
        self.object_names = tuple(o.name for o in self.world.objects)
        M = len(self.object_names)
        self._no_objects = (np.zeros((1, M, 3, 3)), np.zeros((1, M, 3)), np.full((1, M), -1, dtype=np.int64))
        self._entry = None  # distances_kernel's compiled entry, once known (app.kernels.dispatch.entry_point)

    def _world_bodies(self, index: dict[str, int]) -> list[tuple[int, int]]:
        """World bodies appended; pairs: every moving robot body with each, and the held object's."""
        moving = [i for i, b in enumerate(self._bodies) if self.model.movable_links[b[1]]]
        first_world = len(self._bodies)
        pairs = []
        for box in self.world.boxes:
            R, p, half = box_frame(box)
            self._bodies.append(Body(box.name, -1, np.zeros((0, 4)), [(R, p, half)], 0.0, (box_part(R, p, half),)))
            pairs += [(i, len(self._bodies) - 1) for i in moving]
        for sph in self.world.spheres:
            row = sphere_row(sph)
            self._bodies.append(Body(sph.name, -1, row[None], [], 0.0, ((row[None, :3], float(row[3])),)))
            pairs += [(i, len(self._bodies) - 1) for i in moving]
        statics = list(range(first_world, len(self._bodies)))
        for m, obj in enumerate(self.world.objects):  # frame n_links + m: its pose comes with each query
            self._bodies.append(Body(obj.name, self.model.n_links + m, np.asarray(obj.spheres, dtype=float), [],
                                     float(obj.excess)))
            pairs += [(i, len(self._bodies) - 1) for i in moving + statics]  # statics: while held (else no gradient)
        held = self.world.held
        if held is not None:
            link = self.model.link_index(held.link)
            spheres, excess = held_spheres(held)
            h = len(self._bodies)
            self._bodies.append(Body(held.name, link, spheres, [], excess))
            touching = set(held.touching) if held.touching else holding_links(self.model, link)
            pairs += [(i, h) for i, b in enumerate(self._bodies[:h]) if b[1] < 0 or
                      (b[0] not in touching and b[1] >= 0)]
        return pairs

    def _tables(self, pairs: list[tuple[int, int]]) -> CollisionTables:
        return pack_tables(self._bodies, pairs)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_names)

    def moved_by(self, groups: tuple[tuple[int, ...], ...]) -> np.ndarray:
        """(P, len(groups)) bool: whether a DOF of each group (DOF indices) changes the relative pose of each pair's
        two bodies (moves one and not the other); kept per ``groups``."""
        key = ("moved_by", groups)
        if key not in self._memo:
            ancestor = self.model.jacobian_tables.ancestor  # (n_links, n_dofs): the DOFs above each link
            frames = self.pair_links
            above = np.zeros((len(frames), 2, self.model.n_dofs), dtype=bool)
            for side in (0, 1):
                real = (frames[:, side] >= 0) & (frames[:, side] < self.model.n_links)
                above[real, side] = ancestor[frames[real, side]]
            relative = above[:, 0] ^ above[:, 1]
            self._memo[key] = np.stack([relative[:, list(g)].any(axis=1) for g in groups], axis=1).reshape(
                len(frames), len(groups))
        return self._memo[key]

    @property
    def pair_links(self) -> np.ndarray:
        """(P, 2) the frame of each pair's two bodies: a link index, -1 fixed in the world, n_links + m moving
        object m."""
        return np.array([(self._bodies[a][1], self._bodies[b][1]) for a, b in self._pairs], np.int64).reshape(-1, 2)

    def subset(self, keep: np.ndarray) -> CollisionModel:
        """The same bodies checking only the pairs where ``keep`` (P,) is True, in their order (kept per mask: the
        model is built once)."""
        keep = np.asarray(keep, dtype=bool).reshape(len(self._pairs))
        key = keep.tobytes()
        if key not in self._memo:
            sub = copy.copy(self)  # the bodies' tables shared; the pairs (as packed: box bodies second) filtered
            sub._pairs = [pair for pair, k in zip(self._pairs, keep) if k]
            sub.pair_names = tuple(name for name, k in zip(self.pair_names, keep) if k)
            sub.pair_excess, sub._entry, sub._memo = self.pair_excess[keep], None, {}
            pairs = self.tables.pairs
            sub.tables = self.tables._replace(pairs=PairTables(frozen(pairs.a[keep], np.int64),
                                                               frozen(pairs.b[keep], np.int64)))
            sub.__dict__.pop("pair_kinds", None)
            self._memo[key] = sub
        return self._memo[key]

    def distances(self, q: np.ndarray, with_gradient: bool = True, cutoff: float = np.inf,
                  objects: ObjectPoses | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Signed sphere distances of every checked pair and their gradients.

        Args:
            q: Joint positions. Shape (..., n_dofs).
            cutoff: [m] a pair not closer than this reports a lower bound >= cutoff and a zero gradient (cheaper).
            objects: The moving objects' poses (needed when the world has objects): one row per configuration of
                q flattened, or one row for all.
        Returns:
            ``(d, J)``: d (..., P) [m], a lower bound of the true distance of each pair's shapes;
            J (..., P, n_dofs) = dd/dq [m/rad or m/m] (shape (..., P, 0) without gradients).
        """
        return self._distances(q, with_gradient, cutoff, objects, 0.0)[:2]

    def distances_and_next(self, q: np.ndarray, band: float, cutoff: float = np.inf,
                           objects: ObjectPoses | None = None) -> tuple[np.ndarray, ...]:
        """:meth:`distances` with gradients, and each pair's next-closest sphere pair (or sphere-box): where the
        closest pair of spheres changes within a control tick, the next one's row is what keeps it from closing
        unseen. Returns (d, J, d_next, J_next): d_next (..., P) [m] within ``band`` [m] > 0 of d and below the
        cutoff (inf: none), J_next (..., P, n_dofs)."""
        if not band > 0 or not np.isfinite(band):  # 0 or less would silently give no next pair at all
            raise InputError(f"band must be a finite number > 0 m, got {band}")
        return self._distances(q, True, cutoff, objects, float(band))

    def _distances(self, q: np.ndarray, with_gradient: bool, cutoff: float, objects: ObjectPoses | None,
                   band: float) -> tuple[np.ndarray, ...]:
        q2, batch = self._joints(q)
        shared = (self.model.fk_tables, self.model.jacobian_tables, self.tables, float(min(cutoff, 1e300)),
                  bool(with_gradient), band)
        per = [q2, *self._poses(objects, len(q2))]
        if len(q2) >= 2 * MIN_CHUNK:
            out = chunked(distances_kernel, len(q2), per, shared)
        else:  # one thread: the compiled function called directly (no per-call typing of ~40 table arrays)
            if self._entry is None:
                self._entry = entry_point(distances_kernel, (*per, *shared))
            out = self._entry(*per, *shared)
        return tuple(a.reshape(batch + a.shape[1:]) for a in out)

    def _joints(self, q: np.ndarray) -> tuple[np.ndarray, tuple]:
        """q (..., n_dofs) as contiguous rows (B, n_dofs) and its batch shape; InputError for another width or
        a NaN or inf (the kernels would measure garbage as distances)."""
        q = as_float_array(q, "q")
        if q.ndim == 0 or q.shape[-1] != self.model.n_dofs:
            raise InputError(f"q must have shape (..., {self.model.n_dofs}) (one value per DOF), got {q.shape}")
        if not np.isfinite(q.sum()):  # one reduction: NaN and inf carry through it
            raise InputError("q holds NaN or inf joint values")
        return np.ascontiguousarray(q).reshape(-1, self.model.n_dofs), q.shape[:-1]

    def clear(self, q: np.ndarray, min_distance: float | np.ndarray, objects: ObjectPoses | None = None) -> np.ndarray:
        """Whether every checked pair is at least ``min_distance`` [m] apart by the spheres (a configuration
        stops at its first closer pair): one margin for all, or one per pair (P,) (:meth:`margins`).
        q (..., n_dofs) -> (...) bool; objects as for :meth:`distances`."""
        q2, batch = self._joints(q)
        margins = np.broadcast_to(np.asarray(min_distance, dtype=float), (len(self.pair_names),))
        if not (np.isfinite(margins).all() and (margins >= 0).all() and (margins <= MAX_CLEARANCE).all()):
            raise InputError(f"min_distance must be clearances in [0, {MAX_CLEARANCE:g}] m (one, or one per pair), got "
                             f"{np.asarray(min_distance).tolist()}")
        (ok,) = chunked(clear_kernel, len(q2), [q2, *self._poses(objects, len(q2))],
                        (self.model.fk_tables, self.tables, np.ascontiguousarray(margins)))
        return ok.reshape(batch).astype(bool)

    def evidence(self, q: np.ndarray, near: float, near_wanted: np.ndarray,
                 apart_wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Over configurations q (B, n_dofs), per pair: whether it is ever at most ``near`` [m] >= 0 apart, and
        whether ever apart (> 0), each looked for only where wanted (bool (P,)) and only until seen (then
        False where not wanted). What choosing the pairs needs, without measuring every distance."""
        q2 = np.ascontiguousarray(q, dtype=float).reshape(-1, self.model.n_dofs)
        if not near >= 0:
            raise InputError(f"near must be >= 0 m, got {near}")
        wanted = np.where(near_wanted, NEAR_WANTED, 0) + np.where(apart_wanted, APART_WANTED, 0)
        seen_near, seen_apart = chunked(evidence_kernel, len(q2), [q2, *self._poses(None, len(q2))],
                                        (self.model.fk_tables, self.tables, float(near), wanted.astype(np.int64)))
        return seen_near.any(axis=0), seen_apart.any(axis=0)

    def _poses(self, objects: ObjectPoses | None, batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kernels' object arrays (R, p, link) for ``batch`` configurations, checked."""
        M = len(self.object_names)
        if objects is None:
            if M:
                raise InputError(f"this collision model has moving objects {list(self.object_names)}: give their "
                                 f"poses (objects=ObjectPoses(R (B, {M}, 3, 3), p (B, {M}, 3), link (B, {M})))")
            return self._no_objects
        R, p, link = (np.ascontiguousarray(objects.R, dtype=float), np.ascontiguousarray(objects.p, dtype=float),
                      np.ascontiguousarray(objects.link, dtype=np.int64))
        rows = len(R)
        if R.shape != (rows, M, 3, 3) or p.shape != (rows, M, 3) or link.shape != (rows, M) or rows not in (1, batch):
            raise InputError(f"objects must hold {M} poses for 1 or {batch} configurations: R (B, {M}, 3, 3), "
                             f"p (B, {M}, 3), link (B, {M}); got {R.shape}, {p.shape}, {link.shape}")
        if ((link < -1) | (link >= self.model.n_links)).any():
            raise InputError(f"objects.link must be -1 (base frame) or a link index < {self.model.n_links}")
        return R, p, link

    def closest(self, d: np.ndarray, margins: float | np.ndarray = 0.0) -> list[tuple[str, str, float]]:
        """The pair of each row of ``d`` (B, P) deepest inside its margin (one for all, or (P,)); with no margin the
        closest: (name a, name b, distance [m])."""
        idx = (d - np.asarray(margins, dtype=float)).argmin(axis=-1)
        return [(*self.pair_names[k], float(row[k])) for k, row in zip(idx, d)]

    @functools.cached_property
    def pair_kinds(self) -> tuple[str, ...]:
        """Per checked pair: ``world`` (a link against a box, sphere, object or held object), ``self`` (two links
        of one arm: one above the other, or branching at a link a joint moves, as two fingers) or ``arms`` (links
        of two branches that meet only at a link no joint moves: two arms of a rig)."""
        m = self.model
        names, parent, moving = set(m.link_names), m.fk_tables.parent, m.movable_links

        def kind(a: str, b: str) -> str:
            if a not in names or b not in names:
                return "world"
            ia, ib = m.link_index(a), m.link_index(b)
            up = set(_ancestors(parent, ia))
            lca = next(i for i in _ancestors(parent, ib) if i in up)
            return "self" if lca in (ia, ib) or moving[lca] else "arms"

        return tuple(kind(a, b) for a, b in self.pair_names)

    def margins(self, world: float, arms: float | None = None, self_margin: float = 0.0) -> np.ndarray:
        """Per checked pair (P,) its margin [m]: ``world`` against the world, ``arms`` (default ``world``) between
        two arms, ``self_margin`` within one arm (0: contact)."""
        arms = world if arms is None else arms
        for name, value in (("world", world), ("arms", arms), ("self_margin", self_margin)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                    or not 0 <= value <= MAX_CLEARANCE:
                raise InputError(f"margins: {name} must be a clearance in [0, {MAX_CLEARANCE:g}] m, got {value!r:.40}")
        return np.array([{"world": world, "arms": arms, "self": self_margin}[k] for k in self.pair_kinds])


def _ancestors(parent: np.ndarray, link: int) -> list[int]:
    """``link`` and every link above it to the root, in that order (parent -1 ends it)."""
    out = [int(link)]
    while parent[out[-1]] >= 0:
        out.append(int(parent[out[-1]]))
    return out


def holding_links(model: KinematicModel, link: int) -> set[str]:
    """Names of the links a held object touches or nearly does: the holding link, its parent and every link below
    it (the fingers). The object's pairs with these are not checked."""
    parent = model.fk_tables.parent

    def below(i: int) -> bool:
        while i >= 0:
            if i == link:
                return True
            i = int(parent[i])
        return False

    return {model.link_names[i] for i in range(model.n_links) if below(i)} | (
        {model.link_names[int(parent[link])]} if parent[link] >= 0 else set())
