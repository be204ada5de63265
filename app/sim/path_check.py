"""A referee for planned paths: PyBullet's own closest points between the robot's real collision shapes and the
boxes, for the pairs a sphere model checks, densely along a joint path. Independent of the sphere model's
geometry (it only borrows the list of pairs worth checking)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pybullet as pb

from app.sim.urdf_loader import load_urdf


class PathCollision(NamedTuple):
    """The first configuration found in contact: its index in the checked samples, q (n_dofs,), the pair and
    PyBullet's distance [m] (< 0: penetrating)."""

    index: int
    q: np.ndarray
    pair: tuple
    distance: float


class PyBulletReferee:
    """A DIRECT client holding the robot (from ``model.spec.path``) and ``world``'s boxes (base frame = world)."""

    def __init__(self, model, collision, package_dirs: Sequence[str] | None = None):
        self.model = model
        self.client = pb.connect(pb.DIRECT)
        self.body = load_urdf(self.client, model.spec.path, package_dirs)
        self.boxes = {}
        for box in collision.world.boxes:
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(box.half), physicsClientId=self.client)
            w, x, y, z = box.quat  # PyBullet's quaternions are (x, y, z, w)
            self.boxes[box.name] = pb.createMultiBody(0, shape, -1, list(box.pos), [x, y, z, w],
                                                      physicsClientId=self.client)
        self.pairs = [(a, b) for a, b in collision.pair_names if a in self.body.link_index and
                      (b in self.body.link_index or b in self.boxes)]
        self._joints = [self.body.joint_index[n] for n in model.dof_names]

    def close(self) -> None:
        if self.client >= 0:
            pb.disconnect(physicsClientId=self.client)
            self.client = -1

    def closest(self, q: np.ndarray, margin: float = 0.0) -> tuple[tuple, float] | None:
        """The first pair closer than ``margin`` [m] at q (n_dofs,) and its distance; None when all are farther."""
        for joint, value in zip(self._joints, q):
            pb.resetJointState(self.body.body_id, joint, float(value), physicsClientId=self.client)
        bid, links = self.body.body_id, self.body.link_index
        for a, b in self.pairs:
            if b in self.boxes:
                pts = pb.getClosestPoints(bid, self.boxes[b], margin, links[a], -1, physicsClientId=self.client)
            else:
                pts = pb.getClosestPoints(bid, bid, margin, links[a], links[b], physicsClientId=self.client)
            if pts:
                d = min(p[8] for p in pts)
                if d < margin:
                    return (a, b), float(d)
        return None

    def check_path(self, path: np.ndarray, step: float = 1e-3, margin: float = 0.0) -> PathCollision | None:
        """Every configuration along the straight edges of ``path`` (N, n_dofs), consecutive ones at most
        ``step`` [rad] apart in every DOF; the first closer than ``margin`` [m], or None."""
        k = 0
        for qa, qb in itertools.pairwise(path):
            n = max(1, int(np.ceil(np.abs(qb - qa).max() / step)))
            for t in np.linspace(0.0, 1.0, n + 1)[(1 if k else 0):]:
                q = qa + t * (qb - qa)
                hit = self.closest(q, margin)
                if hit is not None:
                    return PathCollision(k, q, *hit)
                k += 1
        return None

    def __enter__(self) -> PyBulletReferee:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
