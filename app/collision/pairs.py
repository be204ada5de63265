"""Which link pairs to check, found by sampling as MoveIt's setup assistant does: adjacent links, pairs in
contact at the default configuration within one arm (parts designed to touch, as a gripper's two carriages), pairs in contact in every sampled configuration, and pairs never within NEAR of each other (on two
seeds) are skipped; the rest are checked."""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from app.collision.robot_spheres import RobotSpheres
from app.kinematics.model import KinematicModel

log = logging.getLogger(__name__)
NEAR = 0.02  # [m]: a pair whose spheres never came closer than this is never checked
SAMPLES = 100_000  # configurations per seed
CHUNK = 8192


def adjacent_pairs(model: KinematicModel, with_geometry: set[str]) -> set[tuple[str, str]]:
    """Link pairs joined by a joint, links without geometry skipped over (a link is adjacent to its nearest
    ancestor with geometry), and links fixed to each other: their relative pose never changes."""
    parent = model.fk_tables.parent
    names = model.link_names
    out = set()
    for i in range(1, model.n_links):
        if names[i] not in with_geometry:
            continue
        j = parent[i]
        while j >= 0 and names[j] not in with_geometry:
            j = parent[j]
        if j >= 0:
            out.add(tuple(sorted((names[i], names[j]))))
    anc = model.jacobian_tables.ancestor
    geo = [i for i, n in enumerate(names) if n in with_geometry]
    out |= {tuple(sorted((names[a], names[b]))) for a in geo for b in geo if a < b and (anc[a] == anc[b]).all()}
    return out


def sample_configs(model: KinematicModel, n: int, seed: int) -> np.ndarray:
    """n configurations drawn uniformly in the joint windows (+-pi where unlimited). Shape (n, n_dofs)."""
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    return np.random.default_rng(seed).uniform(lo, hi, size=(n, model.n_dofs))


def _sweep(checker, model: KinematicModel, seed: int, n: int, apart_wanted: bool) -> tuple[np.ndarray, np.ndarray]:
    """Over n sampled configurations, per pair: ever within NEAR, ever apart (looked for only if
    ``apart_wanted``). A pair stops being sampled once what is asked of it is seen: the answer does not change
    with more samples, so only pairs never near (or always in contact) see all n."""
    P = len(checker.pair_names)
    near, apart = np.zeros(P, dtype=bool), np.zeros(P, dtype=bool)
    for start in range(0, n, CHUNK):
        want_near, want_apart = ~near, ~apart & apart_wanted
        if not (want_near | want_apart).any():
            break
        q = sample_configs(model, min(CHUNK, n - start), seed * 1_000_003 + start)
        chunk_near, chunk_apart = checker.evidence(q, NEAR, want_near, want_apart)
        near |= chunk_near
        apart |= chunk_apart
    return near, apart


def default_config(model: KinematicModel) -> np.ndarray:
    """The default configuration, MoveIt's: every joint at 0, or at its limit nearest 0. Shape (n_dofs,)."""
    return np.clip(np.zeros(model.n_dofs), model.q_lower, model.q_upper)


def choose_pairs(model: KinematicModel, robot: RobotSpheres, samples: int = SAMPLES,
                 seeds: tuple[int, int] = (0, 1)) -> RobotSpheres:
    """``robot`` with its checked pairs and the skipped ones by reason (adjacent, ignored, default, always,
    never)."""
    from app.collision.checker import CollisionModel  # the checker takes a RobotSpheres: built here for all pairs

    geo = set(robot.spheres) | set(robot.boxes)
    moving = {n for n, m in zip(model.link_names, model.movable_links) if m}
    names = [n for n in model.link_names if n in geo]
    cand = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if a in moving or b in moving]
    adjacent = adjacent_pairs(model, geo)
    skipped = {"adjacent": sorted(p for p in cand if p in adjacent),
               "ignored": sorted(p for p in cand if p in robot.ignore and p not in adjacent)}
    rest = [p for p in cand if p not in adjacent and p not in robot.ignore]
    checker = CollisionModel(model, replace(robot, pairs=tuple(rest)))
    default = (checker.distances(default_config(model)[None], with_gradient=False, cutoff=1e-3)[0][0] <= 0.0) & \
        (np.array(checker.pair_kinds) == "self")
    skipped["default"] = [p for p, s in zip(rest, default) if s]
    rest = [p for p, s in zip(rest, default) if not s]
    checker = CollisionModel(model, replace(robot, pairs=tuple(rest)))
    near, apart = _sweep(checker, model, seeds[0], samples, apart_wanted=True)
    always = ~apart  # in contact in every sample
    far = ~near & ~always
    if far.any():  # confirmed on a second seed
        idx = np.flatnonzero(far)
        near2, _ = _sweep(CollisionModel(model, replace(robot, pairs=tuple(rest[i] for i in idx))), model, seeds[1],
                          samples, apart_wanted=False)
        far[idx] = ~near2
    skipped["always"] = [p for p, s in zip(rest, always) if s]
    skipped["never"] = [p for p, s in zip(rest, far) if s]
    checked = tuple(p for p, a, f in zip(rest, always, far) if not (a or f))
    log.info("%s: %d link pairs checked; skipped: %s", model.name, len(checked),
             {k: len(v) for k, v in skipped.items()})
    return replace(robot, pairs=checked, skipped=skipped, samples=samples)
