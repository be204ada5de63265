"""What the robot may hit besides itself: boxes and spheres given in the model's base frame, and a held
object attached to a link (its spheres move with that link)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.collision.fitting import fit_convex
from app.collision.meshes import box_mesh
from app.errors import InputError
from app.kinematics.rotations import quat_to_matrix


class WorldBox(NamedTuple):
    """A box: name, half extents (3,) [m], centre (3,) [m] and orientation (w, x, y, z) in the base frame."""

    name: str
    half: tuple
    pos: tuple
    quat: tuple = (1.0, 0.0, 0.0, 0.0)


class WorldSphere(NamedTuple):
    """A sphere: name, centre (3,) in the base frame and radius [m]."""

    name: str
    pos: tuple
    radius: float


class HeldObject(NamedTuple):
    """An object held by ``link``: a box of half extents (3,) at pos (3,) / quat (w, x, y, z) in the link's
    frame. It is checked against the world and against robot links other than ``touching`` (by default the
    holding link, its children and its parent: the fingers are meant to touch it)."""

    name: str
    link: str
    half: tuple
    pos: tuple
    quat: tuple = (1.0, 0.0, 0.0, 0.0)
    touching: tuple = ()


class World(NamedTuple):
    """Boxes, spheres and an optional held object."""

    boxes: tuple = ()
    spheres: tuple = ()
    held: HeldObject | None = None


def _vec(value, n: int, what: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (n,) or not np.isfinite(arr).all():
        raise InputError(f"{what} must be {n} finite numbers, got {value!r}")
    return arr


def box_frame(box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R (3, 3), p (3,), half (3,) of a WorldBox or HeldObject, checked."""
    half = _vec(box.half, 3, f"{box.name}.half")
    if not (half > 0).all():
        raise InputError(f"{box.name}.half must be > 0 (half extents in metres), got {box.half!r}")
    quat = _vec(box.quat, 4, f"{box.name}.quat")
    norm = np.linalg.norm(quat)
    if norm < 1e-9:
        raise InputError(f"{box.name}.quat must be a nonzero (w, x, y, z) quaternion")
    return quat_to_matrix(quat / norm), _vec(box.pos, 3, f"{box.name}.pos"), half


def held_spheres(held: HeldObject, reach: float = 0.004) -> tuple[np.ndarray, float]:
    """Spheres (k, 4) in the holding link's frame enclosing the held box, and their excess [m]."""
    R, p, half = box_frame(held)
    fitted = fit_convex(box_mesh(half), reach)
    out = fitted.spheres.copy()
    out[:, :3] = fitted.spheres[:, :3] @ R.T + p
    return out, fitted.excess
