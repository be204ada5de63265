"""Collision margins as velocity rows: n^T (J_a - J_b) qdot >= -gamma (d - d_safe) / h for every
close pair (distance d, unit normal n from body B to body A, witness-point Jacobians J_a, J_b)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from app.ik.qp import INF, Inequalities
from app.kernels.dispatch import kernel_array


@dataclass(frozen=True)
class DistanceRows:
    """Pairs of bodies closer than the detection distance, K of them.

    Attributes:
        distance: Signed distances d [m] (negative in penetration). Shape (K,).
        normal: Unit vectors from body B to body A, world frame. Shape (K, 3).
        J_a, J_b: Linear Jacobians of the witness points on A and B (zeros for a static body),
            world frame. Shape (K, 3, n_dofs).
        labels: Which pair each row is, for telemetry. Length K.
        env: Environment of each row when the rows of several are stacked, grouped by environment.
            Shape (K,); None for one environment's rows.
    """

    distance: np.ndarray
    normal: np.ndarray
    J_a: np.ndarray
    J_b: np.ndarray
    labels: Sequence[str] = ()
    env: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.distance)

    @classmethod
    def empty(cls, n_dofs: int) -> DistanceRows:
        return cls(np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3, n_dofs)), np.zeros((0, 3, n_dofs)))

    @classmethod
    def from_gradients(cls, distance: np.ndarray, gradient: np.ndarray, labels: Sequence[str] = (),
                       env: np.ndarray | None = None) -> DistanceRows:
        """Rows whose gradients dd/dq (K, n_dofs) are known already (a collision model's): stored as the
        normal e_x with J_a's first row the gradient and J_b zero, so n^T (J_a - J_b) is the gradient."""
        K, n = gradient.shape
        normal = np.zeros((K, 3))
        normal[:, 0] = 1.0
        J_a = np.zeros((K, 3, n))
        J_a[:, 0] = gradient
        return cls(np.asarray(distance, dtype=float), normal, J_a, np.zeros((K, 3, n)), labels, env)


class GraspState(NamedTuple):
    """What a motion decided this tick about the contacts its grippers are meant to make, per environment (one
    entry each): ``released`` the objects whose rows with the fingers are dropped (the fingers are meant to touch
    them), ``released_pairs`` (link_a, link_b) self pairs left unwatched (two grippers' fingers while they hand an
    object over), ``holding`` object name -> the arm whose gripper carries it ('' for a robot's one gripper)."""

    released: tuple[frozenset[str], ...]
    released_pairs: tuple[frozenset[tuple[str, str]], ...]
    holding: tuple[dict[str, str], ...]

    @classmethod
    def of_object(cls, name: str, released, holders, released_pairs=None) -> GraspState:
        """The object ``name``'s rows with the fingers dropped where ``released`` (n_envs,) bool, carried by the arm
        ``holders[e]`` (None: by none) in each environment; ``released_pairs``: per environment (None: none)."""
        n = len(holders)
        return cls(tuple(frozenset([name]) if rel else frozenset() for rel in released),
                   tuple(released_pairs) if released_pairs is not None else (frozenset(),) * n,
                   tuple({name: arm} if arm is not None else {} for arm in holders))

    @classmethod
    def nothing(cls, n_envs: int) -> GraspState:
        """No contact meant in any of ``n_envs`` environments: every pair watched."""
        return cls((frozenset(),) * n_envs, (frozenset(),) * n_envs, ({},) * n_envs)


@dataclass(frozen=True)
class CollisionPairs:
    """Which pairs to watch for one robot.

    Attributes:
        obstacles: Names of static boxes (the scene's box names) checked against every robot link.
        self_pairs: (link_a, link_b) names of non-adjacent robot links to keep apart.
        detection_distance: Pairs farther than this [m] produce no row.
        max_rows: At most this many rows per environment (closest first).
    """

    obstacles: tuple[str, ...] = ()
    self_pairs: tuple[tuple[str, str], ...] = ()
    detection_distance: float = 0.15
    max_rows: int = 10


class DistanceParams(NamedTuple):
    """distance (R,), normal (R, 3), J_ab = J_a - J_b (R, 3, n), env (R,) ascending, d_safe [m], gamma, dt [s]."""

    distance: np.ndarray
    normal: np.ndarray
    J_ab: np.ndarray
    env: np.ndarray
    d_safe: float
    gamma: float
    dt: float


@njit(cache=True)
def distance_row_one(dp, r, G):
    """Row r: G (n,) written, the lower bound returned."""
    normal, J_ab = dp.normal[r], dp.J_ab[r]
    for k in range(G.shape[0]):
        G[k] = normal[0] * J_ab[0, k] + normal[1] * J_ab[1, k] + normal[2] * J_ab[2, k]
    return -dp.gamma * (dp.distance[r] - dp.d_safe) / dp.dt


@njit(cache=True)
def distance_rows_batch(dp):
    """Every row: (G (R, n), lo (R,))."""
    R, n = dp.distance.shape[0], dp.J_ab.shape[2]
    G, lo = np.empty((R, n)), np.empty(R)
    for r in range(R):
        lo[r] = distance_row_one(dp, r, G[r])
    return G, lo


def no_distance_rows(n: int, dt: float = 1.0) -> DistanceParams:
    return DistanceParams(np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3, n)), np.zeros(0, dtype=np.int64), 0.0,
                          0.0, float(dt))


class CollisionLimit:
    """Keep ``d_safe`` [m]; gamma is the fraction of the remaining margin that may close per tick.

    ``with_rows(rows)`` gives the limit of one tick's distance rows.
    """

    slot = "distance"

    def __init__(self, d_safe: float = 0.01, gamma: float = 0.05, rows: DistanceRows | None = None):
        self.d_safe, self.gamma, self.rows = float(d_safe), float(gamma), rows

    def __repr__(self) -> str:
        return f"CollisionLimit(d_safe={self.d_safe}, gamma={self.gamma})"

    def with_rows(self, rows: DistanceRows) -> CollisionLimit:
        return CollisionLimit(self.d_safe, self.gamma, rows)

    def params(self, dt: float) -> DistanceParams:
        """The tick's rows as the compiled builder takes them."""
        rows = self.rows
        if rows is None or len(rows) == 0:
            n = 0 if rows is None else rows.J_a.shape[2]
            return no_distance_rows(n, dt)._replace(d_safe=self.d_safe, gamma=self.gamma)
        env = np.zeros(len(rows), dtype=np.int64) if rows.env is None else rows.env.astype(np.int64)
        return DistanceParams(kernel_array(rows.distance), kernel_array(rows.normal), kernel_array(rows.J_a - rows.J_b),
                              env, self.d_safe, self.gamma, float(dt))

    def compute_qp_inequalities(self, dt: float) -> Inequalities:
        """Rows G (K, n_dofs), lo (K,), hi = +inf (K,) of the rows this limit holds."""
        G, lo = distance_rows_batch(self.params(dt))
        return Inequalities(G, lo, np.full(len(lo), INF))
