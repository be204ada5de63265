"""Compiled closed-form solutions (see :mod:`app.ik.analytic` for the method and notation).

Scalar code per target: the numpy version of the same steps cost 78 ms for 4096 targets
(8 branches each, ~32 k small 3x3 products); this kernel is the only implementation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from app.ik._lm import solve_one
from app.ik._residual import residual_one
from app.kernels.dispatch import chunked
from app.kinematics._fk_kernels import frames_one


@njit(cache=True)
def two_link_one(l1, l2, x, y, out):
    """Both elbow branches of a planar two-link arm into out (2, 2) = [branch, (t1, t2)].

    Branch 0 has t2 >= 0. Returns False outside the annulus |l1 - l2| <= r <= l1 + l2 (then the
    closest stretched or folded pose is written). Never NaN: atan2(0, 0) = 0 at the base.
    """
    c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    reachable = abs(c2) <= 1.0 + 1e-12
    c2 = min(1.0, max(-1.0, c2))
    t2 = np.arccos(c2)  # in [0, pi], so sin(t2) = sqrt(1 - c2^2) >= 0; branch 1 mirrors branch 0
    bearing = np.arctan2(y, x)
    k = np.arctan2(l2 * np.sqrt(1.0 - c2 * c2), l1 + l2 * c2)
    out[0, 0], out[0, 1] = bearing - k, t2
    out[1, 0], out[1, 1] = bearing + k, -t2
    return reachable


@njit(cache=True)
def two_link_batch(l1, l2, x, y):
    """x, y (N,) -> (theta (N, 2, 2), reachable (N,))."""
    n = x.shape[0]
    theta = np.empty((n, 2, 2))
    ok = np.empty(n, dtype=np.bool_)
    for i in range(n):
        ok[i] = two_link_one(l1, l2, x[i], y[i], theta[i])
    return theta, ok


@njit(cache=True)
def _wrap(q, lo, hi):
    """q shifted by a multiple of 2 pi into [lo, hi] if possible; (value, ok)."""
    for shift in (0.0, -2.0 * np.pi, 2.0 * np.pi):
        v = q + shift
        if lo - 1e-12 <= v <= hi + 1e-12:
            return min(max(v, lo), hi), True
    return min(max(q, lo), hi), False


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _cross_dot(a, b, c):
    """(a x b) . c"""
    return (a[1] * b[2] - a[2] * b[1]) * c[0] + (a[2] * b[0] - a[0] * b[2]) * c[1] + (a[0] * b[1] - a[1] * b[0]) * c[2]


@njit(cache=True)
def _wrist(c, s, H, w4, w5, v, y, out):
    """Joints 4, 5 from exp(w4 q4) exp(w5 q5) = Ry(phi) H, with H = Rz(q0)^T G; into out (2,).

    c, s: cos and sin of phi. v and y (3,) are scratch buffers.
    """
    for r in range(3):  # v = Ry(phi) H w5
        y[r] = H[r, 0] * w5[0] + H[r, 1] * w5[1] + H[r, 2] * w5[2]
    v[0], v[1], v[2] = c * y[0] + s * y[2], y[1], -s * y[0] + c * y[2]
    sin4, cos4 = _cross_dot(w5, v, w4), _dot(v, w5)
    out[0] = np.arctan2(sin4, cos4)
    norm = np.hypot(sin4, cos4)
    sin4, cos4 = (sin4 / norm, cos4 / norm) if norm > 0.0 else (0.0, 1.0)
    for r in range(3):  # v = Ry(phi) H w4, then y = Rot(w4, -q4) v by Rodrigues
        y[r] = H[r, 0] * w4[0] + H[r, 1] * w4[1] + H[r, 2] * w4[2]
    v[0], v[1], v[2] = c * y[0] + s * y[2], y[1], -s * y[0] + c * y[2]
    d = _dot(w4, v)
    x0, x1, x2 = w4[1] * v[2] - w4[2] * v[1], w4[2] * v[0] - w4[0] * v[2], w4[0] * v[1] - w4[1] * v[0]
    y[0] = v[0] * cos4 - x0 * sin4 + w4[0] * d * (1.0 - cos4)
    y[1] = v[1] * cos4 - x1 * sin4 + w4[1] * d * (1.0 - cos4)
    y[2] = v[2] * cos4 - x2 * sin4 + w4[2] * d * (1.0 - cos4)
    out[1] = np.arctan2(_cross_dot(w4, y, w5), _dot(y, w4))


@njit(cache=True)
def branches_one(p_C, R_C, W_tool, u_tool, R_t0, plane, w4, w5, signs, lo, hi, q, valid):
    """Eight branches of one target into q (8, 6) and valid (8,); branch = 4 shoulder + 2 flip + elbow.

    Args:
        p_C, R_C: Target point (3,) and rotation (3, 3) in frame C.
        W_tool, u_tool: Wrist centre and joint-5 axis in the tool frame. Shapes (3,).
        R_t0: Tool rotation at q = 0 in C. Shape (3, 3).
        plane: (P1x, P1z, l1, l2, g1, g2, W3x, W3z, a4x, a4z), (a4x, a4z) a unit vector.
        w4, w5: Joint 4, 5 axes at q = 0 in C. signs: joints 1-3 about +-y. lo, hi: limits (6,).
    """
    P1x, P1z, l1, l2, g1, g2, W3x, W3z, a4x, a4z = plane
    theta, W, u = np.empty((2, 2)), np.empty(3), np.empty(3)
    G, H, v, y, q45 = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(2)
    for r in range(3):
        W[r] = p_C[r] + R_C[r, 0] * W_tool[0] + R_C[r, 1] * W_tool[1] + R_C[r, 2] * W_tool[2]
        u[r] = R_C[r, 0] * u_tool[0] + R_C[r, 1] * u_tool[1] + R_C[r, 2] * u_tool[2]
        for j in range(3):
            G[r, j] = R_C[r, 0] * R_t0[j, 0] + R_C[r, 1] * R_t0[j, 1] + R_C[r, 2] * R_t0[j, 2]
    base, r = np.arctan2(W[1], W[0]), np.hypot(W[0], W[1])
    c0, s0 = W[0] / r if r > 0.0 else 1.0, W[1] / r if r > 0.0 else 0.0  # cos and sin of base
    for sh in range(2):  # the second shoulder turns the base by pi
        q0 = base + np.pi * sh
        rho = r if sh == 0 else -r
        if sh == 1:
            c0, s0 = -c0, -s0
        for j in range(3):  # H = Rz(q0)^T G
            H[0, j], H[1, j], H[2, j] = c0 * G[0, j] + s0 * G[1, j], -s0 * G[0, j] + c0 * G[1, j], G[2, j]
        ux = c0 * u[0] + s0 * u[1]
        norm = np.hypot(ux, u[2])
        zx, zz = (u[2] / norm, -ux / norm) if norm > 1e-12 else (a4x, a4z)  # else: axis 5 normal to the plane
        c, s = a4x * zx + a4z * zz, a4x * zz - a4z * zx  # cos and sin of phi, the angle from a4 to z
        phi = np.arctan2(s, c)
        for fl in range(2):  # the wrist flip reverses z: phi + pi
            if fl == 1:
                c, s, phi = -c, -s, phi - np.pi if phi > 0.0 else phi + np.pi
            Dx = rho - (c * W3x - s * W3z) - P1x
            Dz = W[2] - (s * W3x + c * W3z) - P1z
            reachable = two_link_one(l1, l2, Dx, Dz, theta)
            _wrist(c, s, H, w4, w5, v, y, q45)  # the same for both elbows: it sees only phi
            for el in range(2):
                k = 4 * sh + 2 * fl + el
                b1, b2 = theta[el, 0] - g1, theta[el, 1] + g1 - g2
                out = q[k]
                out[0], out[1], out[2], out[3] = q0, -signs[0] * b1, -signs[1] * b2, -signs[2] * (phi - b1 - b2)
                out[4], out[5] = q45[0], q45[1]
                ok = reachable
                for j in range(6):
                    out[j], inside = _wrap(out[j], lo[j], hi[j])
                    ok = ok and inside
                valid[k] = ok


@njit(cache=True, nogil=True)
def branches_batch(pos, rot, arm, tool, lo, hi):
    """:func:`branches_one` for N base-frame targets pos (N, 3), rot (N, 3, 3) -> q (N, 8, 6), valid (N, 8).

    arm: ArmTables (app.ik.analytic.kernel_arm); tool: :func:`tool_frame`'s; lo, hi: the arm's limits (6,).
    """
    R_bc, o_bc, w4, w5, plane, signs = arm.R_base_C, arm.o_base_C, arm.w4, arm.w5, arm.plane, arm.signs
    R_t0, W_tool, u_tool = tool
    N = pos.shape[0]
    q = np.empty((N, 8, 6))
    valid = np.empty((N, 8), dtype=np.bool_)
    p_C, R_C = np.empty(3), np.empty((3, 3))
    for n in range(N):
        _to_frame_c(pos[n], rot[n], R_bc, o_bc, p_C, R_C)
        branches_one(p_C, R_C, W_tool, u_tool, R_t0, plane, w4, w5, signs, lo, hi, q[n], valid[n])
    return q, valid


@njit(cache=True)
def _rotate_t(R, v, out):
    """out = R^T v. R (3, 3), v and out (3,)."""
    for r in range(3):
        out[r] = R[0, r] * v[0] + R[1, r] * v[1] + R[2, r] * v[2]


@njit(cache=True)
def _to_frame_c(tgt_pos, tgt_rot, R_bc, o_bc, p_C, R_C):
    """A base-frame target (3,), (3, 3) expressed in frame C (origin o_bc, axes R_bc) into p_C, R_C."""
    d = np.empty(3)
    for r in range(3):
        d[r] = tgt_pos[r] - o_bc[r]
    _rotate_t(R_bc, d, p_C)
    for c in range(3):
        _rotate_t(R_bc, tgt_rot[:, c], R_C[:, c])


@njit(cache=True)
def tool_frame(q_ref, model, arm):
    """Tool rotation at q_arm = 0 and the tool-frame wrist centre and joint-5 axis, all in frame C.

    The non-arm DOFs (fingers) are q_ref's. Returns (R_t0 (3, 3), W_tool (3,), u_tool (3,)).
    """
    R_bc, o_bc, dofs, tool, lp, W0, w5 = arm.R_base_C, arm.o_base_C, arm.dofs, arm.tool, arm.local_point, arm.W0, \
        arm.w5
    L = model.parent.shape[0]
    R, p = np.empty((L, 3, 3)), np.empty((L, 3))
    q0 = q_ref.copy()
    for j in range(6):
        q0[dofs[j]] = 0.0
    frames_one(q0, model, R, p)
    Rt = R[tool]
    R_t0, W_tool, u_tool, d = np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(3)
    for c in range(3):
        _rotate_t(R_bc, Rt[:, c], R_t0[:, c])
    for r in range(3):  # the tool point, relative to C's origin, in the base frame
        d[r] = p[tool, r] + Rt[r, 0] * lp[0] + Rt[r, 1] * lp[1] + Rt[r, 2] * lp[2] - o_bc[r]
    _rotate_t(R_bc, d, W_tool)  # the tool point in C
    for r in range(3):
        d[r] = W0[r] - W_tool[r]
    _rotate_t(R_t0, d, W_tool)
    _rotate_t(R_t0, w5, u_tool)
    return R_t0, W_tool, u_tool


@njit(cache=True)
def analytic_seeds(q_init, tgt_pos, tgt_rot, tool, arm, q_lo, q_hi, seeds):
    """Valid closed-form branches as full configurations, nearest to q_init first; returns their count.

    Args:
        tool: :func:`tool_frame` of q_init (it depends only on the non-arm DOFs).
        arm: (R_base_C (3, 3), o_base_C (3,), dofs (6,), tool link, local point (3,), wrist centre W0 (3,),
            w4 (3,), w5 (3,), plane (10,), signs (3,)) from :func:`app.ik.analytic.kernel_arm`.
        seeds: Output. Shape (8, n). The non-arm DOFs (fingers) are q_init's: they fix the tool.
    """
    R_bc, o_bc, dofs, w4, w5, plane, signs = arm.R_base_C, arm.o_base_C, arm.dofs, arm.w4, arm.w5, arm.plane, \
        arm.signs
    R_t0, W_tool, u_tool = tool
    lo, hi, p_C, R_C = np.empty(6), np.empty(6), np.empty(3), np.empty((3, 3))
    for j in range(6):
        lo[j], hi[j] = q_lo[dofs[j]], q_hi[dofs[j]]
    _to_frame_c(tgt_pos, tgt_rot, R_bc, o_bc, p_C, R_C)
    q_arm, valid = np.empty((8, 6)), np.empty(8, dtype=np.bool_)
    branches_one(p_C, R_C, W_tool, u_tool, R_t0, plane, w4, w5, signs, lo, hi, q_arm, valid)
    dist = np.full(8, np.inf)
    for k in range(8):
        if valid[k]:
            dist[k] = 0.0
            for j in range(6):
                dist[k] += (q_arm[k, j] - q_init[dofs[j]]) ** 2
    order = np.argsort(dist)
    count = 0
    for k in order:
        if valid[k]:
            seeds[count] = q_init
            for j in range(6):
                seeds[count, dofs[j]] = q_arm[k, j]
            count += 1
    return count


@njit(cache=True)
def _other_dofs_differ(q, q_prev, arm_dof):
    """Whether q and q_prev (n,) differ in a DOF outside the arm (``arm_dof`` (n,) False)."""
    for i in range(q.shape[0]):
        if not arm_dof[i] and q[i] != q_prev[i]:
            return True
    return False


NEAR_POS, NEAR_ROT = 0.02, 0.1  # [m], [rad]: a target this close to the start's own pose is a tracking step
FAR_BRANCH = 0.2  # [rad]: a nearest branch this far from such a start in some arm joint is not its continuation


@njit(cache=True, nogil=True)
def _start_first_when_near(q, tgt_pos, tgt_rot, model, task, dofs, seeds, count, R, p, e):
    """Put the start q (n,) before the branches ``seeds[:count]`` when the target is a small step from q's own pose
    (within NEAR_POS, NEAR_ROT) and no branch lies within FAR_BRANCH of q in every arm joint: near a singular place
    (the wrist's joints 3 and 5 lined up, the elbow stretched) the closed form's representative of q's own branch
    can lie far from q while a solution moves on continuously from it, which the polish from q finds. Returns the
    new count (seeds (count + 1, n) at most 9 rows)."""
    if count:  # the nearest branch continues q: the common case, decided without FK
        gap = 0.0
        for j in range(dofs.shape[0]):
            gap = max(gap, abs(seeds[0, dofs[j]] - q[dofs[j]]))
        if gap <= FAR_BRANCH:
            return count
    frames_one(q, model, R, p)
    residual_one(R, p, tgt_pos, tgt_rot, task, e)
    if e[0, 0] ** 2 + e[0, 1] ** 2 + e[0, 2] ** 2 > NEAR_POS ** 2 or \
            e[0, 3] ** 2 + e[0, 4] ** 2 + e[0, 5] ** 2 > NEAR_ROT ** 2:
        return count
    for k in range(count, 0, -1):
        seeds[k] = seeds[k - 1]
    seeds[0] = q
    return count + 1


@njit(cache=True, nogil=True)
def solve_seeded_kernel(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, arm):
    """The compiled IK loop (app.ik._lm.solve_one) started from each problem's closed-form branches.

    Same arguments and returns as app.ik._lm._solve_batch, with the closed-form parameters ``arm``
    in place of precomputed seeds. A kernel of its own, so that problems without a closed form
    never compile this code.
    """
    B, n = q_init.shape
    q_out = np.empty_like(q_init)
    err = np.empty((B, tgt_pos.shape[1], 6))
    iters = np.zeros(B, dtype=np.int64)
    restarts = np.zeros(B, dtype=np.int64)
    seeds = np.empty((9, n))
    arm_dof = np.zeros(n, dtype=np.bool_)
    arm_dof[arm.dofs] = True
    tool = tool_frame(q_init[0], model, arm)
    R, p, e = np.empty((model.parent.shape[0], 3, 3)), np.empty((model.parent.shape[0], 3)), np.empty((1, 6))
    for b in range(B):
        if b and _other_dofs_differ(q_init[b], q_init[b - 1], arm_dof):
            tool = tool_frame(q_init[b], model, arm)
        count = analytic_seeds(q_init[b], tgt_pos[b, 0], tgt_rot[b, 0], tool, arm, opts.q_lo, opts.q_hi, seeds)
        count = _start_first_when_near(q_init[b], tgt_pos[b], tgt_rot[b], model, task, arm.dofs, seeds, count, R, p, e)
        iters[b], restarts[b] = solve_one(q_init[b], starts[b % starts.shape[0]], model, kin, tgt_pos[b],
                                          tgt_rot[b], task, free, opts, seeds,
                                          count, q_out[b], err[b])
    return q_out, err, iters, restarts


def solve_seeded(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, arm):
    """:func:`solve_seeded_kernel` split over threads (app.kernels.dispatch)."""
    def kernel(q_init, starts, tgt_pos, tgt_rot):
        return solve_seeded_kernel(q_init, starts, model, kin, tgt_pos, tgt_rot, task, free, opts, arm)

    return chunked(kernel, q_init.shape[0], (q_init, starts, tgt_pos, tgt_rot), ())
