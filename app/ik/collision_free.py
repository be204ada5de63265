"""Collision-free pose IK: a layer around the pose solvers that keeps only answers whose every checked
pair (self, world, held object) is at least ``min_distance`` apart by the sphere model, or says it found
none.

Candidates, cheapest first: the closed form's 8 branches (WidowX family), ranked by distance to the
initial configuration; then the LM solver from ``restarts`` random starts for the targets still open.
A candidate counts only if it reaches the target (the IK's tolerances) and clears every pair.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np

from app.collision.checker import CollisionModel
from app.errors import InputError
from app.ik.analytic import analytic_ik, certified_arm
from app.kinematics.rotations import quat_exp, quat_multiply

log = logging.getLogger(__name__)


class CollisionFreeResult(NamedTuple):
    """q (B, n_dofs); collision_free (B,): reaches the target with every pair >= min_distance; converged (B,):
    some candidate reached the target (IKResult's word); closest (B,): where not collision-free, (name a, name b,
    distance [m]) of the closest pair at q; None where collision-free (every pair is >= min_distance)."""

    q: np.ndarray
    collision_free: np.ndarray
    converged: np.ndarray
    closest: list


SPINS = 8  # rotations about the one aligned axis tried with the closed form (rot_mask with one True)


def _closed_form_plan(model, link, ik_kwargs: dict):
    """The closed-form certificate and the spin axis (None: full pose) where the closed form gives answers:
    full 6-D targets, or a rot_mask with one True (any rotation about that link axis also meets it)."""
    if any(k in ik_kwargs for k in ("pos_mask", "local_point", "dofs_idx_local")):
        return None, None
    mask = np.asarray(ik_kwargs.get("rot_mask", (True, True, True)), dtype=bool).reshape(-1)
    if mask.shape != (3,) or mask.sum() not in (1, 3) or (mask.sum() == 1 and "frame_rotation" in ik_kwargs):
        return None, None  # (a masked axis in a rotated frame is not the link axis the spins turn about)
    return certified_arm(model, model.link_index(link)), (None if mask.all() else np.eye(3)[int(mask.argmax())])


def _closed_form_candidates(model, arm, link, pos, quat, q0, spin_axis):
    """Every branch (for each spin about ``spin_axis``) as full configurations, nearest to q0 first:
    (B, C, n_dofs) and valid (B, C)."""
    angles = [0.0] if spin_axis is None else np.arange(SPINS) * 2 * np.pi / SPINS
    cands, valids = [], []
    for angle in angles:
        qt = quat if angle == 0.0 else quat_multiply(quat, quat_exp(spin_axis * angle))
        q_all, valid = analytic_ik(model, link, pos, qt, q_rest=q0[0], arm=arm)
        cand = np.repeat(q0[:, None], q_all.shape[1], axis=1)
        cand[..., list(arm.dof_idx)] = q_all
        cands.append(cand)
        valids.append(valid)
    cand, valid = np.concatenate(cands, axis=1), np.concatenate(valids, axis=1)
    order = np.argsort(np.where(valid, np.abs(cand - q0[:, None]).sum(-1), np.inf), axis=1, kind="stable")
    return np.take_along_axis(cand, order[..., None], 1), np.take_along_axis(valid, order, 1)


def check_margins(min_distance: float, self_min_distance: float, arm_min_distance: float | None) -> None:
    """Each margin a finite length >= 0 [m] (None: arm_min_distance follows min_distance); InputError otherwise."""
    for name, value in (("min_distance", min_distance), ("self_min_distance", self_min_distance),
                        ("arm_min_distance", arm_min_distance)):
        if value is None and name == "arm_min_distance":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value) \
                or value < 0:
            raise InputError(f"{name} must be a finite clearance >= 0 m, got {value!r}")


def collision_free_ik(model, cm: CollisionModel, link, pos: np.ndarray, quat: np.ndarray, min_distance: float = 0.0,
                      init_qpos: np.ndarray | None = None, restarts: int = 4, seed: int = 0,
                      self_min_distance: float = 0.0, arm_min_distance: float | None = None,
                      **ik_kwargs) -> CollisionFreeResult:
    """Collision-free configurations for B pose targets of ``link``.

    Args:
        pos: (B, 3) [m], quat: (B, 4) (w, x, y, z), base frame. min_distance: [m] the clearance kept from the
            world (boxes, objects); arm_min_distance: between two arms of a rig (None: min_distance);
            self_min_distance: between links of one arm (0: no contact; an arm's own links sit millimetres apart
            by design, e.g. the WidowX AI's link_4 and link_6).
        init_qpos: (n_dofs,) or (B, n_dofs); default the mid configuration (also the fingers' values).
        restarts: LM attempts per open target (the first from init_qpos, then random starts).
        ik_kwargs: passed to the LM solve (pos_tol, rot_tol, rot_mask, ...). The closed form gives candidates
            for full poses and for a rot_mask with one True (SPINS rotations about that axis); a pos_mask,
            local point or DOF subset turns it off.
    """
    pos, quat = np.atleast_2d(np.asarray(pos, float)), np.atleast_2d(np.asarray(quat, float))
    search = start_search(model, cm, len(pos), init_qpos, min_distance, self_min_distance, arm_min_distance)
    q0, margins, best, done, reached = search
    arm, spins = _closed_form_plan(model, link, ik_kwargs)
    if arm is not None:
        cand, valid = _closed_form_candidates(model, arm, link, pos, quat, q0, spins)
        reached |= valid.any(axis=1)
        best[reached] = cand[reached, valid[reached].argmax(axis=1)]  # a reaching answer, if none is clear
        for rank in range(cand.shape[1]):  # nearest branch first; a target leaves once one is clear
            todo = np.flatnonzero(~done & valid[:, rank])
            if len(todo) == 0:
                continue
            ok = cm.clear(cand[todo, rank], margins)
            best[todo[ok]] = cand[todo[ok], rank]
            done[todo[ok]] = True
    return restart_search(model, cm, search, restarts, seed, lambda open_, start: model.inverse_kinematics(
        link, pos=pos[open_], quat=quat[open_], init_qpos=start, return_info=True, max_samples=1,
        **{"warn": False, **ik_kwargs}))  # misses: said once, by the caller


class Search(NamedTuple):
    """A collision-free search over B targets: q0 (B, n_dofs) the starts; margins (P,) [m] per checked pair; best
    (B, n_dofs) the answers so far; done (B,): clear; reached (B,): some answer reached the target."""

    q0: np.ndarray
    margins: np.ndarray
    best: np.ndarray
    done: np.ndarray
    reached: np.ndarray


def start_search(model, cm: CollisionModel, n: int, init_qpos, min_distance: float, self_min_distance: float,
                 arm_min_distance: float | None) -> Search:
    """The search's state for n targets from ``init_qpos`` ((n_dofs,) or (n, n_dofs); None: the mid
    configuration), its margins checked (check_margins)."""
    q0 = np.broadcast_to(model.mid_config() if init_qpos is None else np.asarray(init_qpos, float),
                         (n, model.n_dofs)).copy()
    check_margins(min_distance, self_min_distance, arm_min_distance)
    margins = cm.margins(float(min_distance), arm_min_distance, float(self_min_distance))
    return Search(q0, margins, q0.copy(), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))


def restart_search(model, cm: CollisionModel, search: Search, restarts: int, seed: int, solve) -> CollisionFreeResult:
    """The LM solver's restarts for the targets still open (the first from q0, then random starts), kept where
    clear; ``solve(open_ (m,) target indices, starts (m, n_dofs))`` -> their IKResult. Then the result, with the
    closest pair of each target left open."""
    q0, margins, best, done, reached = search
    starts = random_starts(model, seed)
    for r in range(restarts):
        open_ = np.flatnonzero(~done)
        if len(open_) == 0:
            break
        info = solve(open_, q0[open_] if r == 0 else starts(len(open_)))
        conv = np.asarray(info.converged)
        ok = conv.copy()
        if conv.any():
            ok[conv] = cm.clear(info.q[conv], margins)
        newly = conv & ~reached[open_]  # a reaching (colliding) answer, shown where no clear one is found
        best[open_[newly]] = info.q[newly]
        reached[open_] |= conv
        best[open_[ok]] = info.q[ok]
        done[open_[ok]] = True
    return CollisionFreeResult(best, done, reached, closest_pairs(cm, best, done, margins))


def random_starts(model, seed: int):
    """A draw of n random configurations (n, n_dofs) within the limits (an unbounded joint within +-pi)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    return lambda n: rng.uniform(lo, hi, (n, model.n_dofs))


def first_target(res: CollisionFreeResult) -> CollisionFreeResult:
    """The result of a call with one target: its row of each field."""
    return CollisionFreeResult(res.q[0], res.collision_free[0], res.converged[0], res.closest[0])


def closest_pairs(cm: CollisionModel, q: np.ndarray, done: np.ndarray, margins: np.ndarray) -> list:
    """Per row of q (B, n_dofs): None where ``done`` (collision-free), else (name a, name b, distance [m]) of its
    pair deepest inside its margin (B,)."""
    closest: list = [None] * len(q)
    if not done.all():
        d, _ = cm.distances(q[~done], with_gradient=False, cutoff=float(margins.max()) + 1e-3)  # the pairs
        # inside their margins measured, the rest bounded from below; rows with none inside (an answer that did not
        # reach) measured whole, so that the closest pair named is the closest
        whole = (d - margins).min(axis=1) >= 0
        if whole.any():
            d[whole] = cm.distances(q[~done][whole], with_gradient=False)[0]
        for k, c in zip(np.flatnonzero(~done), cm.closest(d, margins)):
            closest[k] = c
    return closest


def inverse_kinematics_avoiding(model, link, pos, quat, *, min_distance: float = 0.0, collision=None,
                                init_qpos=None, return_info: bool = False, self_min_distance: float = 0.0,
                                arm_min_distance: float | None = None, **ik_kwargs):
    """``model.inverse_kinematics(..., avoid_collisions=True, min_distance=..., collision=...)``: one target
    (3,)/(4,) or n targets (n, 3)/(n, 4). ``collision``: a CollisionModel or a World (the model's own file
    gives the robot's spheres); None: self-collisions only. Returns q ([n,] n_dofs), or with return_info a
    CollisionFreeResult (q, collision_free, converged, closest) of the same leading shape."""
    from app.collision.build import collision_model
    from app.collision.world import World

    cm = collision if isinstance(collision, CollisionModel) else collision_model(model, collision or World())
    pos_a, quat_a = np.asarray(pos, dtype=float), np.asarray(quat, dtype=float)
    one = pos_a.ndim == 1
    res = collision_free_ik(model, cm, link, pos_a.reshape(-1, 3), quat_a.reshape(-1, 4), min_distance, init_qpos,
                            self_min_distance=self_min_distance, arm_min_distance=arm_min_distance, **ik_kwargs)
    warn_misses(res, min_distance)
    if one:
        res = first_target(res)
    return res if return_info else res.q


def warn_misses(res: CollisionFreeResult, min_distance: float) -> None:
    """One line each for the targets out of reach (no IK solution at all) and those reached only in collision
    (with the pair deepest inside its margin of the first)."""
    unreached, colliding = ~res.converged, res.converged & ~res.collision_free
    if unreached.any():
        log.warning("%d of %d targets are out of reach: pose IK found no solution, with or without collisions",
                    int(unreached.sum()), len(res.q))
    if colliding.any():
        log.warning("%d of %d targets are reached only in collision (world clearance %g m); the first's pair "
                    "deepest inside its margin: %s", int(colliding.sum()), len(res.q), min_distance,
                    res.closest[int(np.argmax(colliding))])
