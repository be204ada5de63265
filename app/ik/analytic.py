"""Closed-form IK: the planar two-link arm, and 6R arms of the WidowX AI's family.

The family: joint 0 about an axis a0; joints 1, 2, 3 about parallel axes perpendicular to a0,
with every joint origin (and the wrist centre) in one plane that contains a0; joint 4's axis
in that plane; joint 4's and joint 5's axes perpendicular and meeting at the wrist centre.
:func:`certify` checks these conditions on the model's numbers (tolerance ``CERT_TOL``)
instead of assuming them. Up to 8 solutions: shoulder front/back x elbow up/down x wrist flip.

Method (product of exponentials at q = 0, in a canonical frame C: origin on a0, z along a0,
y along a1): the wrist centre W is rigid in the tool frame, so the target gives W; joint 0
turns the arm plane onto W; joint 4's axis must lie in the plane and be perpendicular to
joint 5's axis (known from the target), which fixes the sum of the planar angles up to a
flip; a planar two-link solve places joints 2 and 3; joints 4 and 5 follow from two
single-axis rotation subproblems.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from app.errors import InputError, NotApplicableError
from app.ik._analytic_kernel import branches_batch, tool_frame, two_link_batch
from app.ik._residual import ROT_FULL
from app.ik.cache import cached
from app.ik.ik_tables import ArmTables
from app.kernels.dispatch import chunked, kernel_array
from app.kinematics.model import KinematicModel, LinkRef
from app.validation import as_float_array, as_rotation_matrices, as_vectors, check_finite

CERT_TOL = 1e-9  # [m] and [rad]: how far the URDF's numbers may deviate from the ideal structure
N_BRANCHES = 8


def two_link_ik(l1: float, l2: float, x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """Both elbow branches of a planar two-link arm reaching (x, y).

    FK: x = l1 cos t1 + l2 cos(t1 + t2), y = l1 sin t1 + l2 sin(t1 + t2).

    Args:
        l1, l2: Link lengths [m], > 0.
        x, y: Target coordinates [m]. Any broadcastable shape (...).
    Returns:
        ``(theta, reachable)``: theta of shape (..., 2, 2), [branch, (t1, t2)] with branch 0
        having t2 >= 0 and branch 1 t2 <= 0; reachable (...) is False outside the annulus
        |l1 - l2| <= r <= l1 + l2, where the answer is the closest stretched/folded pose.
        The target at the base (l1 = l2) gives t1 = atan2(0, 0) = 0, never NaN.
    """
    if not (l1 > 0 and l2 > 0):
        raise InputError(f"link lengths must be > 0, got l1={l1}, l2={l2}")
    x, y = np.broadcast_arrays(as_float_array(x, "x"), as_float_array(y, "y"))
    check_finite(x, "x"), check_finite(y, "y")
    theta, ok = two_link_batch(float(l1), float(l2), np.ascontiguousarray(x.ravel()), np.ascontiguousarray(y.ravel()))
    return theta.reshape(x.shape + (2, 2)), ok.reshape(x.shape)


@dataclass(frozen=True, eq=False)
class WristPartitionedArm:
    """A certified arm of the family, in the canonical frame C (see module docstring).

    Attributes:
        dof_idx: The six arm DOFs, base to tip. Shape (6,).
        T_base_C: Rotation (3, 3) and origin (3,) of frame C in the model's base frame.
        signs: +-1: joint i turns about +-y of C (i = 1, 2, 3). Shape (3,).
        P1, L1, L2, W3: Planar (x, z) vectors: joint-1 point, joint 1->2, 2->3, 3->wrist centre.
        a4: Planar direction of joint 4's axis at q = 0. Shape (2,).
        w4, w5: Joint 4 and 5 axes at q = 0, in C. Shape (3,).
        tool: Link index of the tool link.
    """

    dof_idx: np.ndarray
    R_base_C: np.ndarray
    o_base_C: np.ndarray
    signs: np.ndarray
    P1: np.ndarray
    L1: np.ndarray
    L2: np.ndarray
    W3: np.ndarray
    a4: np.ndarray
    w4: np.ndarray
    w5: np.ndarray
    W0: np.ndarray
    tool: int


def _arm_axes(model: KinematicModel, link: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first six DOFs on the path to ``link`` and their axes and points at q = 0 (base frame)."""
    chain = np.flatnonzero(model.jacobian_tables.ancestor[link])
    if len(chain) < 6 or not model.revolute[chain[:6]].all():
        raise NotApplicableError(f"link '{model.link_names[link]}' needs six revolute joints before it, "
                                 f"found DOFs {[model.dof_names[k] for k in chain]}")
    dof_idx = chain[:6]
    R, p = model.link_frames(np.zeros(model.n_dofs))
    dof_link, axis = model.jacobian_tables.dof_link, model.jacobian_tables.axis
    axes = np.einsum("kij,kj->ki", R[dof_link[dof_idx]], axis[dof_idx])
    return dof_idx, axes, p[dof_link[dof_idx]]


def _require(ok: bool, what: str, deviation: float) -> None:
    if not ok:
        raise NotApplicableError(f"{what} (deviation {deviation:.3g}, tolerance {CERT_TOL:g})")


def _line_intersection(p1, d1, p2, d2) -> tuple[np.ndarray, float]:
    """Closest point between two lines (midpoint) and their distance."""
    n = np.cross(d1, d2)
    t = np.dot(np.cross(p2 - p1, d2), n) / np.dot(n, n)
    s = np.dot(np.cross(p2 - p1, d1), n) / np.dot(n, n)
    a, b = p1 + t * d1, p2 + s * d2
    return 0.5 * (a + b), float(np.linalg.norm(a - b))


def certify(model: KinematicModel, link: LinkRef) -> WristPartitionedArm:
    """Check the family's structure on the model's numbers; raise NotApplicableError saying which failed."""
    tool = model.link_index(link)
    dof_idx, w, r = _arm_axes(model, tool)
    y = w[1]
    for i in (2, 3):
        _require(np.linalg.norm(np.cross(w[i], y)) < CERT_TOL, f"joint {i} axis is not parallel to joint 1's",
                 np.linalg.norm(np.cross(w[i], y)))
    _require(abs(np.dot(w[0], y)) < CERT_TOL, "joint 0 axis is not perpendicular to joint 1's", abs(np.dot(w[0], y)))
    _require(abs(np.dot(w[4], y)) < CERT_TOL, "joint 4 axis is not in the arm plane", abs(np.dot(w[4], y)))
    _require(abs(np.dot(w[4], w[5])) < CERT_TOL, "joint 4 and 5 axes are not perpendicular", abs(np.dot(w[4], w[5])))
    W0, gap = _line_intersection(r[4], w[4], r[5], w[5])
    _require(gap < CERT_TOL, "joint 4 and 5 axes do not intersect", gap)
    z = w[0]
    x = np.cross(y, z)
    R_base_C = np.stack([x, y, z], axis=1)
    o = r[0]
    off_plane = [abs(np.dot(y, pt - o)) for pt in (r[1], r[2], r[3], W0)]
    _require(max(off_plane) < CERT_TOL, "joint origins and wrist centre are not in one plane with joint 0's axis",
             max(off_plane))
    to_C = lambda v: R_base_C.T @ v  # noqa: E731
    planar = lambda pt: to_C(pt - o)[[0, 2]]  # noqa: E731
    P = [planar(pt) for pt in (r[1], r[2], r[3], W0)]
    return WristPartitionedArm(dof_idx, R_base_C, o, np.sign(w[1:4] @ y), P[0], P[1] - P[0], P[2] - P[1],
                               P[3] - P[2], to_C(w[4])[[0, 2]], to_C(w[4]), to_C(w[5]), to_C(W0 - o), tool)


def analytic_ik(model: KinematicModel, link: LinkRef, pos: object, quat: object, *, local_point: object = None,
                q_rest: object = None, arm: WristPartitionedArm | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every closed-form solution for a link rigidly attached after joint 5.

    Args:
        link: Tool link (end effector, fingertip, ...); DOFs after joint 5 on its path (the
            gripper fingers) are held at ``q_rest``.
        pos: Target position [m], base frame. Shape (..., 3).
        quat: Target (w, x, y, z). Shape (..., 4).
        local_point: Point on the link placed at ``pos`` [m]. Shape (3,).
        q_rest: Values of the non-arm DOFs; default the mid-point of the limits. Shape (n_dofs,).
        arm: A certificate from :func:`certify` (computed if None).
    Returns:
        ``(q_all, valid)``: q_all (..., 8, 6) for the six arm DOFs ``arm.dof_idx``, branch index =
        4 shoulder + 2 flip + elbow; valid (..., 8): reachable and within the joint limits (angles
        shifted by 2 pi into the limits where the joint allows it).
    Raises:
        NotApplicableError: the model's structure is not of this family (see :func:`certify`).
    """
    arm = certify(model, link) if arm is None else arm
    pos, rot = as_vectors(pos, "pos", 3), as_rotation_matrices(quat, "quat")
    lp = np.zeros(3) if local_point is None else as_vectors(local_point, "local_point", 3)
    rest = model.mid_config() if q_rest is None else model.check_q(q_rest, "q_rest")
    karm = kernel_arm(arm, lp)
    batch = pos.shape[:-1]
    if rot.shape[:-2] != batch:
        batch = np.broadcast_shapes(batch, rot.shape[:-2])
        pos, rot = np.broadcast_to(pos, batch + (3,)), np.broadcast_to(rot, batch + (3, 3))
    pos, rot = kernel_array(pos.reshape(-1, 3)), kernel_array(rot.reshape(-1, 3, 3))
    shared = (karm, tool_frame(rest, model.fk_tables, karm), model.q_lower[arm.dof_idx], model.q_upper[arm.dof_idx])
    q, valid = chunked(branches_batch, len(pos), (pos, rot), shared)
    return q.reshape(batch + (N_BRANCHES, 6)), valid.reshape(batch + (N_BRANCHES,))


def certified_arm(model: KinematicModel, link: int) -> WristPartitionedArm | None:
    """:func:`certify`'s result for a link index, kept in the model's cache; None when the family does not apply."""
    return cached(model, ("closed form", int(link)), lambda: _certified_or_none(model, link))


def _certified_or_none(model: KinematicModel, link: int) -> WristPartitionedArm | None:
    try:
        return certify(model, link)
    except NotApplicableError:
        return None


def ranked_solutions(model: KinematicModel, link: LinkRef, pos: object, quat: object, q_ref: np.ndarray, *,
                     local_point: object = None, arm: WristPartitionedArm | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every branch as a full configuration, valid ones first, nearest to ``q_ref`` first.

    Args:
        q_ref: Reference configuration; also gives the non-arm DOFs. Shape (n_dofs,) or (B, n_dofs)
            (the non-arm DOFs must then be equal in every row).
    Returns:
        ``(q, valid)``: q (..., 8, n_dofs), valid (..., 8), sorted. ``q[..., 0, :]`` is the nearest
        valid solution where ``valid[..., 0]``.
    """
    arm = certify(model, link) if arm is None else arm
    q_ref = np.asarray(q_ref, dtype=float)
    q_arm, valid = analytic_ik(model, link, pos, quat, local_point=local_point,
                               q_rest=q_ref.reshape(-1, model.n_dofs)[0], arm=arm)
    full = np.broadcast_to(q_ref[..., None, :], q_arm.shape[:-1] + (model.n_dofs,)).copy()
    full[..., arm.dof_idx] = q_arm
    dist = np.linalg.norm(q_arm - q_ref[..., None, arm.dof_idx], axis=-1) + np.where(valid, 0.0, 1e6)
    order = np.argsort(dist, axis=-1, kind="stable")
    return np.take_along_axis(full, order[..., None], axis=-2), np.take_along_axis(valid, order, axis=-1)


def nearest_solution(model: KinematicModel, link: LinkRef, pos: object, quat: object, q_ref: np.ndarray, **kwargs):
    """The valid closed-form solution nearest to ``q_ref``: (q (..., n_dofs), found (...))."""
    q, valid = ranked_solutions(model, link, pos, quat, q_ref, **kwargs)
    return q[..., 0, :], valid[..., 0]


def kernel_arm(arm: WristPartitionedArm, local_point: np.ndarray) -> ArmTables:
    """The certificate as the compiled IK loop takes it (see app.ik._analytic_kernel.analytic_seeds)."""
    return _kernel_arm(arm, tuple(np.asarray(local_point, dtype=float)))


@functools.lru_cache(maxsize=64)
def _kernel_arm(arm: WristPartitionedArm, local_point: tuple[float, float, float]) -> ArmTables:
    plane = np.array([*arm.P1, np.linalg.norm(arm.L1), np.linalg.norm(arm.L2), np.arctan2(arm.L1[1], arm.L1[0]),
                      np.arctan2(arm.L2[1], arm.L2[0]), *arm.W3, *arm.a4 / np.linalg.norm(arm.a4)])
    return ArmTables(arm.R_base_C, arm.o_base_C, arm.dof_idx.astype(np.int64), int(arm.tool),
                     np.asarray(local_point, dtype=float), arm.W0, arm.w4, arm.w5, plane, arm.signs.astype(float))


def closed_form(model: KinematicModel, targets) -> tuple | None:
    """The compiled IK loop's closed-form parameters when they apply to ``targets`` (a PoseTargets):
    one link, full orientation, every position axis; else None."""
    if len(targets.links) != 1 or targets.rot_mode[0] != ROT_FULL or not targets.pos_mask.all():
        return None
    arm = certified_arm(model, int(targets.links[0]))
    return None if arm is None else kernel_arm(arm, targets.local_points[0])
