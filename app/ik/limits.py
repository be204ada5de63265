"""Velocity-level limits as inequality rows lo <= G qdot <= hi (mink's compute_inequalities)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.ik._qp_kernel import distance_rows_batch, joint_box
from app.ik.qp import INF, Inequalities
from app.kinematics.model import RobotModel


class JointLimits:
    """Velocity bounds intersected with a one-tick lookahead on the position limits, and an
    acceleration window around the measured velocity.

    (q_min - q)/h <= qdot <= (q_max - q)/h and |qdot| <= velocity_scale * v_max, in one box row
    per DOF. A DOF already past a limit (physics slack) is asked to come back no faster than
    its velocity bound allows: the box never becomes empty. If ``accel_max`` is given, qdot
    stays within qdot_measured +- accel_max h, clamped into that box (position and velocity
    limits win over the acceleration window), and |qdot| <= sqrt(2 accel_max d) at a distance d
    from a limit, so that the joint can still brake before it.

    Args:
        model: The robot.
        velocity_scale: Fraction of the URDF velocity limits to allow.
        accel_max: Joint acceleration bound [rad/s^2 or m/s^2], scalar or (n_dofs,); None for none.
    """

    def __init__(self, model: RobotModel, velocity_scale: float = 1.0, accel_max: float | None = None):
        self.v_max = np.minimum(model.v_max * velocity_scale, INF)
        self.q_min, self.q_max = model.q_lower, model.q_upper
        self.accel_max = accel_max
        self._accel = np.broadcast_to(np.inf if accel_max is None else np.asarray(accel_max, dtype=float),
                                      self.v_max.shape).copy()

    def __repr__(self) -> str:
        return f"JointLimits(v_max={np.round(self.v_max, 3).tolist()}, accel_max={self.accel_max})"

    def kernel_args(self, dt: float) -> tuple:
        """(dt, v_max, q_min, q_max, accel_max (n,), use_accel) as the compiled joint box takes them."""
        return float(dt), self.v_max, self.q_min, self.q_max, self._accel, self.accel_max is not None

    def compute_inequalities(self, q: np.ndarray, dt: float, qdot: np.ndarray | None = None) -> Inequalities:
        """Box rows: q ([B,] n_dofs), dt [s], qdot ([B,] n_dofs) measured velocity; lo, hi ([B,] n_dofs)."""
        q = np.asarray(q, dtype=float)
        q2 = np.ascontiguousarray(q.reshape(-1, q.shape[-1]))
        v2 = q2 if qdot is None else np.ascontiguousarray(np.asarray(qdot, dtype=float).reshape(q2.shape))  # q2: unused
        lo, hi = joint_box(q2, v2, *self.kernel_args(dt), qdot is not None)
        return Inequalities(np.eye(q.shape[-1]), lo.reshape(q.shape), hi.reshape(q.shape))


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


class CollisionLimit:
    """n^T (J_a - J_b) qdot >= -gamma (d - d_safe) / h for every close pair.

    Args:
        d_safe: Margin to keep [m]. gamma: Fraction of the remaining margin that may close per tick.
    """

    def __init__(self, d_safe: float = 0.01, gamma: float = 0.05):
        self.d_safe, self.gamma = float(d_safe), float(gamma)

    def __repr__(self) -> str:
        return f"CollisionLimit(d_safe={self.d_safe}, gamma={self.gamma})"

    def kernel_args(self, rows: DistanceRows) -> tuple:
        """(distance, normal, J_a - J_b, env, d_safe, gamma) as the compiled distance rows take them."""
        f = lambda a: np.ascontiguousarray(a, dtype=float)  # noqa: E731
        env = np.zeros(len(rows), dtype=np.int64) if rows.env is None else rows.env.astype(np.int64)
        return f(rows.distance), f(rows.normal), f(rows.J_a - rows.J_b), env, self.d_safe, self.gamma

    def compute_inequalities(self, rows: DistanceRows, dt: float) -> Inequalities:
        """Rows G (K, n_dofs), lo (K,), hi = +inf (K,)."""
        distance, normal, J_ab, _, d_safe, gamma = self.kernel_args(rows)
        G, lo = distance_rows_batch(distance, normal, J_ab, d_safe, gamma, float(dt))
        return Inequalities(G, lo, np.full(len(rows), INF))
