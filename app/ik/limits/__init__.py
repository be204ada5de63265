"""Velocity limits of the QP, one module each: a NamedTuple of compiled parameters, its per-row
kernel, and a thin class (compute_qp_inequalities) that fills the tuple. The compiled builder
(app.ik.qp_builder) assembles the QP from them."""

from app.ik.limits.distance import CollisionLimit, CollisionPairs, DistanceRows
from app.ik.limits.given_rows import RowsLimit
from app.ik.limits.joint_box import JointLimits
from app.ik.limits.sphere_rows import SphereRows
from app.ik.limits.velocity_box import VelocityBox

__all__ = ["CollisionLimit", "CollisionPairs", "DistanceRows", "JointLimits", "RowsLimit", "SphereRows",
           "VelocityBox"]
