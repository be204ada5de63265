"""Velocity tasks of the QP, one module each: a NamedTuple of compiled parameters, its per-row
kernel, and a thin class (compute_error / compute_jacobian) that fills the tuple. The compiled
builder (app.ik.qp_builder) assembles the QP from them."""

from app.ik.tasks.frame import FrameTask
from app.ik.tasks.given_rows import RowsTask
from app.ik.tasks.posture import PostureTask, posture_velocity

__all__ = ["FrameTask", "PostureTask", "RowsTask", "posture_velocity"]
