"""Why an arm fell behind its end-effector target, tick by tick (pure numpy, the model's base frame).

An arm is behind when its masked position error exceeds ``pos_tol`` or its rotation error ``rot_tol``. Then each
cause is tested on the measured state (q, q-dot) and the target:

- ``unreachable``: pose IK (seeded from q, the task's masks) finds no configuration within the joint limits;
- ``policy_jump``: the target moved faster than the arm can follow at its velocity bounds: the joint velocity its
  own twist needs (damped pseudo-inverse of the task Jacobian) exceeds a bound by ``factor``;
- ``collision_margin``: a collision row of the controller is at its bound;
- ``joint_limit``: a joint within ``limit_tol`` of a bound would have to move past it to close the error;
- ``singular``: the smallest singular value of the arm's task Jacobian is under ``singular_threshold``;
- ``velocity_bound``: a joint moves at its velocity bound, or changes velocity at the acceleration bound.

A behind tick with none of these is ``unexplained`` (the controller's own convergence), never silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from app.control.status import REACHED_POS, REACHED_ROT
from app.kinematics.rotations import matrix_to_quat, so3_log

CAUSES = ("unreachable", "policy_jump", "collision_margin", "joint_limit", "singular", "velocity_bound")  # priority
UNEXPLAINED = "unexplained"
DAMPING = 1e-3  # of the pseudo-inverse that turns task motions into joint motions


@dataclass(frozen=True)
class StallLimits:
    """Thresholds of the diagnosis. pos_tol [m], rot_tol [rad]: behind above these; singular_threshold: of the
    task Jacobian's smallest singular value (rows in m/rad and rad/rad); limit_tol [rad or m]: a joint this close
    to a bound is at it; velocity_tol: fraction of a velocity (or acceleration) bound counted as at it;
    ik_restarts: of the reachability check; refresh_ticks, refresh_m [m]: between its full searches, at most this
    many ticks and this far the target moves (see StallDiagnosis._ik)."""

    pos_tol: float = REACHED_POS
    rot_tol: float = REACHED_ROT
    singular_threshold: float = 0.01
    limit_tol: float = 2e-3
    velocity_tol: float = 0.995
    ik_restarts: int = 10
    refresh_ticks: int = 50
    refresh_m: float = 0.02


class ArmErrors(NamedTuple):
    """Per arm (k arms): pos_err (k,) [m], rot_err (k,) [rad], task error vectors (k, 6) (masked entries 0);
    tasks: each arm's task at those joints (StallDiagnosis._task's tuple), for causes() at the same tick."""

    pos_err: np.ndarray
    rot_err: np.ndarray
    error: np.ndarray
    tasks: tuple = ()


def _perpendicular_basis(axis: np.ndarray) -> np.ndarray:
    """Two unit vectors (3, 2) spanning the plane perpendicular to the unit ``axis`` (3,)."""
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    b1 = np.cross(axis, helper)
    b1 /= np.linalg.norm(b1)
    return np.stack([b1, np.cross(axis, b1)], axis=1)


class StallDiagnosis:
    """The diagnosis for a model's arms (end-effector links), with the controller's masks and bounds.

    Args:
        model: A RobotModel. links: One end-effector link per arm. pos_mask, rot_mask: The task's masks (rot_mask:
            all, none or one axis; pos_mask on the base axes). v_bound: Velocity bounds the controller keeps
            (n_dofs,) [rad/s or m/s] (0: a held DOF). accel_max: Its acceleration bound [rad/s^2] or None.
            dt: Control tick [s]. limits: Thresholds. carry: carry an unreachable target's last search from tick to
            tick (see :meth:`_ik`): for one trajectory's ticks in order (app.track), not for calls from many
            environments or episodes.
    """

    def __init__(self, model, links: list[str], pos_mask, rot_mask, v_bound: np.ndarray, accel_max: float | None,
                 dt: float, limits: StallLimits | None = None, carry: bool = False):
        self.model, self.links = model, list(links)
        self.link_idx = [model.link_index(link) for link in self.links]
        self.pos_rows = np.flatnonzero(np.asarray(pos_mask, dtype=bool))
        self.rot_mask = tuple(bool(m) for m in rot_mask)
        self.v_bound, self.accel_max, self.dt = np.asarray(v_bound, dtype=float), accel_max, float(dt)
        self.limits = limits or StallLimits()
        self._carried: dict[int, _Carried] = {}  # arm -> its last search that found the target unreachable
        self.carry = bool(carry)
        q_mid = model.mid_config()
        self.arm_dofs = [np.flatnonzero((np.abs(model.get_jacobian(q_mid, link)) > 0).any(axis=0) & (self.v_bound > 0))
                         for link in self.links]

    def _rotation_rows(self, R: np.ndarray, R_target: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """(projection (r, 3) of angular velocities onto the task's rotation rows, or None for all three; the
        rotation error in those rows)."""
        n_free = sum(self.rot_mask)
        if n_free == 3:
            return None, so3_log(R_target @ R.T)
        if n_free == 0:
            return np.zeros((0, 3)), np.zeros(0)
        a = self.rot_mask.index(True)
        z, z_t = R[:, a], R_target[:, a]
        cross = np.cross(z, z_t)
        angle = np.arctan2(np.linalg.norm(cross), float(z @ z_t))
        s = np.linalg.norm(cross)
        if s > 1e-12:
            rotvec = cross / s * angle
        else:  # aligned (no error) or opposite (any perpendicular axis turns it back)
            rotvec = np.zeros(3) if angle < 1.0 else _perpendicular_basis(z)[:, 0] * angle
        B = _perpendicular_basis(z).T
        return B, B @ rotvec

    def _task(self, q: np.ndarray, j: int, pos_t: np.ndarray, R_t: np.ndarray):
        """Arm j's task: (J (r, n), error (r,), pos_err, rot_err, rotation projection) at q."""
        frames_R, frames_p = self.model.link_frames(np.asarray(q, dtype=float))  # one FK pass for pose and J
        link = self.link_idx[j]
        R, pos = frames_R[link], frames_p[link][None]
        P, rot_err = self._rotation_rows(R, R_t)
        J = self.model.jacobian_from_frames(frames_R, frames_p, link)
        J_rot = J[3:] if P is None else P @ J[3:]
        e_pos = (pos_t - pos[0])[self.pos_rows]
        return (np.vstack([J[self.pos_rows], J_rot]), np.concatenate([e_pos, rot_err]), float(np.linalg.norm(e_pos)),
                float(np.linalg.norm(rot_err)), P)

    def errors(self, q: np.ndarray, pos_t: np.ndarray, R_t: np.ndarray) -> ArmErrors:
        """Masked errors of every arm at q (n_dofs,) against targets pos_t (k, 3), R_t (k, 3, 3), base frame."""
        k = len(self.links)
        pos_err, rot_err, err = np.zeros(k), np.zeros(k), np.zeros((k, 6))
        tasks = tuple(self._task(q, j, pos_t[j], R_t[j]) for j in range(k))
        for j, (_, e, pos_err[j], rot_err[j], _) in enumerate(tasks):
            err[j, :len(e)] = e
        return ArmErrors(pos_err, rot_err, err, tasks)

    def behind(self, errors: ArmErrors) -> np.ndarray:
        """Which arms are behind (k,) bool."""
        return (errors.pos_err > self.limits.pos_tol) | (errors.rot_err > self.limits.rot_tol)

    def causes(self, j: int, q: np.ndarray, v: np.ndarray, v_prev: np.ndarray, pos_t: np.ndarray, R_t: np.ndarray,
               twist_in: np.ndarray, collision_rows: list[str], task: tuple | None = None) -> dict:
        """Arm j's causes at one behind tick: {cause: detail} (details: the jump factor, the smallest singular
        value, the joints at a limit or a velocity bound, the collision rows, the IK's residual).

        Args:
            q, v, v_prev: Measured joints, velocities now and one tick earlier (n_dofs,). pos_t (3,), R_t (3, 3):
                The target (base frame). twist_in (6,): The target's motion into this tick (base frame).
            collision_rows: Labels of the controller's collision rows at their bound this tick.
            task: Arm j's task at q (``errors(...).tasks[j]``), where the caller has it.
        """
        lim, dofs, names = self.limits, self.arm_dofs[j], self.model.dof_names
        J, e, _, _, P = self._task(q, j, pos_t, R_t) if task is None else task
        J = J[:, dofs]
        found: dict = {}
        ik = self._ik(j, q, pos_t, R_t)
        if ik is not None:
            found["unreachable"] = {"ik_pos_err_m": ik[0], "ik_rot_err_rad": ik[1]}
        pinv = J.T @ np.linalg.inv(J @ J.T + DAMPING**2 * np.eye(len(J)))
        twist = np.concatenate([twist_in[:3][self.pos_rows], twist_in[3:] if P is None else P @ twist_in[3:]])
        factor = float(np.max(np.abs(pinv @ twist) / self.v_bound[dofs]))
        if factor > 1.0:
            found["policy_jump"] = {"factor": factor}
        if collision_rows:
            found["collision_margin"] = {"rows": sorted(set(collision_rows))}
        d, dq_lo, dq_hi = pinv @ e, q[dofs] - self.model.q_lower[dofs], self.model.q_upper[dofs] - q[dofs]
        push = 1e-2 * np.max(np.abs(d))
        blocked = ((dq_lo <= lim.limit_tol) & (d < -push)) | ((dq_hi <= lim.limit_tol) & (d > push))
        if blocked.any():
            found["joint_limit"] = {"joints": [names[i] for i in dofs[blocked]]}
        sigma = float(np.linalg.svd(J, compute_uv=False).min()) if J.size else 0.0
        if sigma < lim.singular_threshold:
            found["singular"] = {"sigma_min": sigma, "threshold": lim.singular_threshold}
        at_v = np.abs(v[dofs]) >= lim.velocity_tol * self.v_bound[dofs]
        if self.accel_max is not None:
            at_v |= np.abs(v[dofs] - v_prev[dofs]) >= lim.velocity_tol * self.accel_max * self.dt
        if at_v.any():
            found["velocity_bound"] = {"joints": [names[i] for i in dofs[at_v]]}
        return found

    def _ik(self, j: int, q: np.ndarray, pos_t: np.ndarray, R_t: np.ndarray) -> tuple[float, float] | None:
        """None if pose IK reaches arm j's target; else its best (pos_err [m], rot_err [rad]).

        A full search (seeded from q, ``ik_restarts`` restarts) where arm j's last search found its target reachable,
        or ``refresh_ticks`` ticks ago, or the target has moved ``refresh_m`` since. In between, a target of a
        stretch already found unreachable is tried by one descent from the last search's best configuration (the
        carried answer): reached, the stretch ends; not, its residual is reported. An unreachable tick then costs
        one descent, not every restart's (seven times a reachable tick before)."""
        carried = self._carried.get(j) if self.carry else None
        if carried is not None and carried.ticks < self.limits.refresh_ticks \
                and np.linalg.norm(pos_t - carried.pos_t) < self.limits.refresh_m:
            info = self._solve(j, carried.q_best, pos_t, R_t, restarts=0)
            if not bool(np.all(info.converged)):
                self._carried[j] = carried._replace(q_best=np.asarray(info.q, dtype=float).reshape(-1),
                                                    ticks=carried.ticks + 1)
                return float(np.max(info.pos_err)), float(np.max(info.rot_err))
        info = self._solve(j, q, pos_t, R_t, restarts=self.limits.ik_restarts)
        if bool(np.all(info.converged)):
            self._carried.pop(j, None)
            return None
        if self.carry:
            self._carried[j] = _Carried(np.asarray(info.q, dtype=float).reshape(-1), np.array(pos_t, dtype=float), 0)
        return float(np.max(info.pos_err)), float(np.max(info.rot_err))

    def _solve(self, j: int, seed: np.ndarray, pos_t: np.ndarray, R_t: np.ndarray, restarts: int):
        return self.model.inverse_kinematics(self.links[j], pos_t, matrix_to_quat(R_t), init_qpos=seed,
                                             pos_mask=[i in self.pos_rows for i in range(3)], rot_mask=self.rot_mask,
                                             max_restarts=restarts, warn=False, return_info=True)


class _Carried(NamedTuple):
    """An arm's last reachability search that found its target unreachable: its best configuration (n_dofs,), the
    target it searched for (3,) [m], the ticks carried since."""

    q_best: np.ndarray
    pos_t: np.ndarray
    ticks: int
