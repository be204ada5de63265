"""Collision-free pose IK for several links at once: the arms of a rig reaching into one place (two arms into a bin).

Solving arm by arm fails there: an arm's clear branch depends on where the other arm is. So the arms are solved
together. Where every link has a closed form (the WidowX family, full 6-D targets, arms on disjoint DOFs), each
arm's branches are enumerated and the combinations are tried nearest to ``init_qpos`` first (the sum of the arms'
joint distances). The pairs split in three:
- pairs whose relative pose no arm joint changes (a finger against its own link_6) are the same for every branch:
  checked once per distinct start;
- the nearest combination is first checked on all the other pairs in one pass (where most targets end);
- for the rest, an arm's own pairs (its links against the world and against each other) depend on that arm's branch alone, so
  each branch is checked once, when a combination first needs it;
- the other pairs (between the arms) are checked per combination.
A target is clear when one combination clears them all; otherwise the LM solver tries ``restarts`` starts (the first from
``init_qpos``, then random ones), as for one link. With masks or without a closed form only the restarts run.
"""

from __future__ import annotations

import itertools

import numpy as np

from app.collision.checker import CollisionModel
from app.errors import InputError
from app.ik.analytic import analytic_ik, certified_arm
from app.ik.collision_free import CollisionFreeResult, Search, first_target, restart_search, start_search, warn_misses

MAX_COMBINATIONS = 512  # branch combinations enumerated (8 per arm: three arms); more arms use the restarts only


def _closed_forms(model, links: list[str], ik_kwargs: dict) -> list | None:
    """Each link's closed-form certificate where all have one on disjoint DOFs and the targets are full poses."""
    if any(k in ik_kwargs for k in ("pos_mask", "rot_mask", "local_points", "dofs_idx_local")):
        return None
    arms = [certified_arm(model, model.link_index(link)) for link in links]
    if any(a is None for a in arms) or 8 ** len(arms) > MAX_COMBINATIONS:
        return None
    dofs = np.concatenate([a.dof_idx for a in arms])
    return arms if len(np.unique(dofs)) == len(dofs) else None


def _split_pairs(cm: CollisionModel, arms: list) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Masks (P,) of the pairs: ``fixed``, whose two bodies' relative pose no arm DOF changes (a finger against its
    own link_6: the same for every branch, checked once); per arm its own (moved by that arm's DOFs alone); the
    rest."""
    moved = cm.moved_by(tuple(tuple(int(k) for k in arm.dof_idx) for arm in arms))
    fixed = ~moved.any(axis=1)
    own = [moved[:, i] & (moved.sum(axis=1) == 1) for i in range(len(arms))]
    return fixed, own, ~fixed & ~np.any(own, axis=0)


class _Branches:
    """Every arm's closed-form answers for B targets and the memo of which clear their arm's own pairs."""

    def __init__(self, model, arms, links, pos, quat, q0):
        self.arms, self.q0 = arms, q0
        self.q, self.valid, cost = [], [], []
        for i, (arm, link) in enumerate(zip(arms, links)):
            q_all, valid = analytic_ik(model, link, pos[:, i], quat[:, i], q_rest=q0[0], arm=arm)
            self.q.append(q_all)
            self.valid.append(valid)
            cost.append(np.where(valid, np.abs(q_all - q0[:, None, list(arm.dof_idx)]).sum(-1), np.inf))
        self.combos = np.array(list(itertools.product(*(range(c.shape[1]) for c in cost))))  # (C, k)
        total = sum(c[:, self.combos[:, i]] for i, c in enumerate(cost))  # (B, C)
        self.order = np.argsort(total, axis=1, kind="stable")
        self.finite = np.take_along_axis(np.isfinite(total), self.order, axis=1)
        self.state = [np.where(v, 0, 2).astype(np.int8) for v in self.valid]  # 0 unknown, 1 clear, 2 not

    def config(self, rows: np.ndarray, picks: np.ndarray, arms=None) -> np.ndarray:
        """Configurations (len(rows), n_dofs): the arms' branches ``picks`` (len(rows), k), the rest from q0."""
        q = self.q0[rows].copy()
        for i in range(len(self.arms)) if arms is None else arms:
            q[:, list(self.arms[i].dof_idx)] = self.q[i][rows, picks[:, i]]
        return q

    def own_clear(self, i: int, own: CollisionModel, margins, rows, picks) -> np.ndarray:
        """Whether arm i's branch picks[:, i] clears its own pairs, for each of ``rows``; checked once each."""
        state = self.state[i]
        new = state[rows, picks[:, i]] == 0
        if new.any():
            q = self.config(rows[new], picks[new], arms=[i])
            ok = own.clear(q, margins)
            state[rows[new], picks[new, i]] = np.where(ok, 1, 2)
        return state[rows, picks[:, i]] == 1


def _nearest_at_once(br: _Branches, moving: CollisionModel, margins: np.ndarray, rows: np.ndarray,
                     search: Search) -> None:
    """The nearest combination of ``rows`` checked on every moving pair in one call (most targets end here: one
    pass over the configurations instead of one per arm and one between them); its arms' branches are then known
    clear. Rows it does not clear go on to the per-arm search, which finds which arm's pairs fail."""
    if len(rows) == 0:
        return
    picks = br.combos[br.order[rows, 0]]
    q = br.config(rows, picks)
    clear = moving.clear(q, margins)
    search.best[rows[clear]] = q[clear]
    search.done[rows[clear]] = True
    for i, state in enumerate(br.state):
        state[rows[clear], picks[clear, i]] = 1


def _branch_search(model, cm, arms, links, pos, quat, search: Search) -> None:
    """The combinations of branches nearest first until one clears every pair, per target (into ``search``)."""
    q0, margins, best, done, reached = search
    fixed_mask, own_masks, rest_mask = _split_pairs(cm, arms)
    owns, own_margins = [cm.subset(m) for m in own_masks], [margins[m] for m in own_masks]
    rest, rest_margins = cm.subset(rest_mask), margins[rest_mask]
    fixed = cm.subset(fixed_mask)
    possible = np.ones(len(q0), dtype=bool)
    if fixed.n_pairs:  # the same for targets that start alike (the default: every one from the mid configuration)
        if (q0 == q0[0]).all():
            possible[:] = fixed.clear(q0[:1], margins[fixed_mask])[0]
        else:
            starts, which = np.unique(q0, axis=0, return_inverse=True)
            possible = fixed.clear(starts, margins[fixed_mask])[which.reshape(-1)]
    br = _Branches(model, arms, links, pos, quat, q0)
    reached |= br.finite[:, 0]
    rows = np.flatnonzero(reached)
    best[rows] = br.config(rows, br.combos[br.order[rows, 0]])  # the nearest reaching answer, if none is clear
    _nearest_at_once(br, cm.subset(~fixed_mask), margins[~fixed_mask], rows[possible[rows]], search)
    for rank in range(br.combos.shape[0]):
        rows = np.flatnonzero(~done & possible & br.finite[:, rank])
        if len(rows) == 0:
            if not ((~done & possible)[:, None] & br.finite[:, rank:]).any():
                break
            continue
        picks = br.combos[br.order[rows, rank]]
        ok = np.ones(len(rows), dtype=bool)
        for i, own in enumerate(owns):
            ok[ok] = br.own_clear(i, own, own_margins[i], rows[ok], picks[ok])
        if not ok.any():
            continue
        rows, picks = rows[ok], picks[ok]
        q = br.config(rows, picks)
        clear = rest.clear(q, rest_margins)
        best[rows[clear]] = q[clear]
        done[rows[clear]] = True


def collision_free_ik_links(model, cm: CollisionModel, links: list[str], pos: np.ndarray, quat: np.ndarray,
                            min_distance: float = 0.0, init_qpos: np.ndarray | None = None, restarts: int = 4,
                            seed: int = 0, self_min_distance: float = 0.0, arm_min_distance: float | None = None,
                            **ik_kwargs) -> CollisionFreeResult:
    """Collision-free configurations for B targets of k links at once.

    Args:
        links: k link names. pos: (B, k, 3) [m], quat: (B, k, 4) (w, x, y, z), base frame.
        the others: as app.ik.collision_free.collision_free_ik (margins [m], init_qpos (n_dofs,) or (B, n_dofs),
            restarts, ik_kwargs for the LM solve).
    """
    pos, quat = np.asarray(pos, dtype=float), np.asarray(quat, dtype=float)
    search = start_search(model, cm, len(pos), init_qpos, min_distance, self_min_distance, arm_min_distance)
    arms = _closed_forms(model, links, ik_kwargs)
    if arms is not None:
        _branch_search(model, cm, arms, links, pos, quat, search)
    return restart_search(model, cm, search, restarts, seed, lambda open_, start: model.inverse_kinematics_multilink(
        links, list(pos[open_].transpose(1, 0, 2)), list(quat[open_].transpose(1, 0, 2)), init_qpos=start,
        return_info=True, max_samples=1, **{"warn": False, **ik_kwargs}))


def inverse_kinematics_multilink_avoiding(model, links, poss, quats, *, min_distance: float = 0.0, collision=None,
                                          init_qpos=None, return_info: bool = False, self_min_distance: float = 0.0,
                                          arm_min_distance: float | None = None, **ik_kwargs):
    """``model.inverse_kinematics_multilink(..., avoid_collisions=True, min_distance=..., collision=...)``: k links,
    each with a position and a quaternion, one target (3,)/(4,) or n targets (n, 3)/(n, 4) each. ``collision``: a
    CollisionModel or a World (None: self-collisions only). Returns q ([n,] n_dofs), or with return_info a
    CollisionFreeResult of the same leading shape."""
    from app.collision.build import collision_model
    from app.collision.world import World

    names = [model.link_names[model.link_index(link)] for link in links]
    pos, quat = _stacked(poss, len(names), 3, "poss"), _stacked(quats, len(names), 4, "quats")
    one = pos.ndim == 2
    if pos.shape[:-1] != quat.shape[:-1]:
        raise InputError(f"poss and quats must give as many targets per link, got {pos.shape[:-1]} and "
                         f"{quat.shape[:-1]}")
    cm = collision if isinstance(collision, CollisionModel) else collision_model(model, collision or World())
    res = collision_free_ik_links(model, cm, names, pos[None] if one else pos, quat[None] if one else quat,
                                  min_distance, init_qpos,
                                  self_min_distance=self_min_distance, arm_min_distance=arm_min_distance, **ik_kwargs)
    warn_misses(res, min_distance)
    if one:
        res = first_target(res)
    return res if return_info else res.q


def _stacked(entries, k: int, width: int, name: str) -> np.ndarray:
    """k per-link targets, each (width,) or (n, width), as (k, width) or (n, k, width); InputError otherwise."""
    if entries is None or len(entries) != k or any(e is None for e in entries):
        raise InputError(f"avoid_collisions needs a full pose per link: {name} with {k} entries, none None")
    arrays = [np.asarray(e, dtype=float) for e in entries]
    if any(a.shape[-1:] != (width,) or a.ndim > 2 for a in arrays) or len({a.shape for a in arrays}) != 1:
        raise InputError(f"{name} entries must each be ({width},) or (n, {width}), all alike, got "
                         f"{[a.shape for a in arrays]}")
    return np.stack(arrays, axis=-2)
