"""What the robot may hit besides itself: boxes and spheres given in the model's base frame, a held
object attached to a link (its spheres move with that link), and moving objects whose poses are given with
each query (ObjectPoses: free in the base frame, or attached to a link while held)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.collision.fitting import fit_convex
from app.collision.meshes import box_mesh, prism_mesh
from app.errors import InputError
from app.kinematics.rotations import quat_to_matrix
from app.validation import has_zero_quaternion, unit_quaternions


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


class MovingObject(NamedTuple):
    """An object that moves (a pick-and-place cube): spheres (k, 4) in its own frame enclosing its shape [m], and
    their excess [m] (object_spheres). Its pose comes with each query (ObjectPoses)."""

    name: str
    spheres: np.ndarray
    excess: float


class ObjectPoses(NamedTuple):
    """The poses of a world's M moving objects for B configurations (B may be 1: shared by all).

    R (B, M, 3, 3), p (B, M, 3): each object's frame in the frame of link[b, m] (B, M) int64, -1 for the model's
    base frame; an object given in a link's frame moves with that link (held: its distance gradients include the
    link's motion); one in the base frame is fixed for the query (no gradient on its side)."""

    R: np.ndarray
    p: np.ndarray
    link: np.ndarray


class World(NamedTuple):
    """Boxes, spheres, an optional held object and moving objects."""

    boxes: tuple = ()
    spheres: tuple = ()
    held: HeldObject | None = None
    objects: tuple = ()


def _vec(value, n: int, what: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (n,) or not np.isfinite(arr).all():
        raise InputError(f"{what} must be {n} finite numbers, got {value!r}")
    return arr


def box_frame(box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R (3, 3), p (3,), half (3,) of a WorldBox or HeldObject, checked."""
    half = _vec(box.half, 3, f"{box.name}.half")
    if not (half > 0).all():
        raise InputError(f"{box.name}.half must be > 0 (half extents in metres), got {half.tolist()}")
    quat = _vec(box.quat, 4, f"{box.name}.quat")
    if has_zero_quaternion(quat):
        raise InputError(f"{box.name}.quat must be a nonzero (w, x, y, z) quaternion")
    return quat_to_matrix(unit_quaternions(quat)), _vec(box.pos, 3, f"{box.name}.pos"), half


def sphere_row(sphere: WorldSphere) -> np.ndarray:
    """(x, y, z, r) of a WorldSphere, checked: a finite centre and a radius that is a number > 0 (not a bool)."""
    r = sphere.radius
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, float, np.integer, np.floating)) \
            or not np.isfinite(r) or r <= 0:
        raise InputError(f"{sphere.name}.radius must be a finite number > 0 m, got {r!r}")
    return np.array([*_vec(sphere.pos, 3, f"{sphere.name}.pos"), float(r)])


def held_spheres(held: HeldObject, reach: float = 0.004) -> tuple[np.ndarray, float]:
    """Spheres (k, 4) in the holding link's frame enclosing the held box, and their excess [m]."""
    R, p, half = box_frame(held)
    fitted = fit_convex(box_mesh(half), reach)
    out = fitted.spheres.copy()
    out[:, :3] = fitted.spheres[:, :3] @ R.T + p
    return out, fitted.excess


def object_spheres(name: str, shape: str, half: np.ndarray, reach: float = 0.004) -> MovingObject:
    """A MovingObject for a primitive: ``shape`` "box" (half extents (3,) [m]), "sphere" (half[0] the radius) or
    "cylinder" (half = (radius, radius, half height), axis z)."""
    half = np.asarray(half, dtype=float)
    if shape == "sphere":
        return MovingObject(name, np.array([[0.0, 0.0, 0.0, float(half[0])]]), 0.0)
    if shape not in ("box", "cylinder"):
        raise InputError(f"object {name!r}: spheres are fitted to box, cylinder and sphere objects, not {shape!r}")
    hull = box_mesh(half) if shape == "box" else prism_mesh(float(half[0]), 2 * float(half[2]))
    fitted = fit_convex(hull, reach)
    return MovingObject(name, fitted.spheres.copy(), float(fitted.excess))
