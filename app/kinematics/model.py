"""KinematicModel: batched forward kinematics and geometric Jacobians in pure numpy (the user-facing
``app.RobotModel`` adds the IK methods on top, in app.ik.robot_model).

Every movable joint (revolute, continuous, prismatic) is one DOF, in depth-first link
order. ``<mimic>`` tags are recorded in :attr:`KinematicModel.mimic` but not enforced: each
mimicking joint stays an independent DOF, as in PyBullet, so that IK may move the two
fingers of a gripper separately. Frames are URDF link frames in the model's base frame.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from app.errors import InputError, UnknownNameError
from app.kernels.dispatch import entry_point, kernel_array
from app.kinematics._fk_kernels import jacobian_kernel, link_frames_kernel, point_jacobians_kernel
from app.kinematics.fk_tables import FKTables, JacobianTables
from app.kinematics.rotations import matrix_to_quat, rpy_to_matrix
from app.kinematics.urdf import URDFSpec, parse_urdf, parse_urdf_string
from app.validation import as_float_array, as_point, check_finite

LinkRef = str | int
WINDOW_TOL = 1e-6  # [rad] or [m]: how far outside its joint window a set position may be (then clipped)


class KinematicModel:
    """Kinematic tree of a URDF robot.

    Attributes:
        name: Robot name from the URDF.
        link_names: Link names, root first. Shape (n_links,).
        dof_names: Movable joint names. Shape (n_dofs,).
        q_lower, q_upper: Position limits [rad] or [m]; +-inf for continuous joints. Shape (n_dofs,).
        v_max: Velocity limits [rad/s] or [m/s]. Shape (n_dofs,).
        effort_max: Effort limits [N m] or [N]. Shape (n_dofs,).
        mimic: ``{joint: (source_joint, multiplier, offset)}`` from ``<mimic>`` tags.
    """

    def __init__(self, spec: URDFSpec):
        self.spec = spec
        self.name = spec.name
        self.link_names: tuple[str, ...] = spec.links
        self._link_index = {n: i for i, n in enumerate(spec.links)}
        dofs = [j for j in spec.joints if j.movable]
        self.dof_names: tuple[str, ...] = tuple(j.name for j in dofs)
        self.n_dofs, self.n_links = len(dofs), len(spec.links)
        self.q_lower = self._frozen([j.lower for j in dofs])
        self.q_upper = self._frozen([j.upper for j in dofs])
        self.v_max = self._frozen([j.velocity for j in dofs])
        self.effort_max = self._frozen([j.effort for j in dofs])
        lo = np.where(np.isfinite(self.q_lower), self.q_lower, -np.pi)
        hi = np.where(np.isfinite(self.q_upper), self.q_upper, np.pi)
        self._mid = self._frozen(0.5 * (lo + hi))
        self.mimic = {j.name: (j.mimic.joint, j.mimic.multiplier, j.mimic.offset) for j in dofs if j.mimic}
        self._build_tables(spec)
        for arr in (self._parent, self._R_origin, self._p_origin, self._link_dof, self._dof_link, self._axis,
                    self._revolute, self._ancestor):
            arr.setflags(write=False)
        self._fk = FKTables(self._parent, self._R_origin, self._p_origin, self._link_dof, self._axis, self._revolute)
        self._jac = JacobianTables(self._dof_link, self._axis, self._revolute, self._ancestor)
        self._fk_entry = self._jac_entry = None  # compiled FK / Jacobian, called directly once known

    @staticmethod
    def _frozen(values: Sequence[float] | np.ndarray) -> np.ndarray:
        arr = np.array(values, dtype=float)
        arr.setflags(write=False)
        return arr

    def _build_tables(self, spec: URDFSpec) -> None:
        """Precompute per-link parents, joint origins, axes and the DOF ancestry mask."""
        n = self.n_links
        self._parent = np.full(n, -1)
        self._R_origin = np.tile(np.eye(3), (n, 1, 1))
        self._p_origin = np.zeros((n, 3))
        self._link_dof = np.full(n, -1)  # DOF moving each link's joint, -1 if fixed
        self._dof_link = np.zeros(self.n_dofs, dtype=int)  # child link of each DOF's joint
        self._axis = np.zeros((self.n_dofs, 3))
        self._revolute = np.zeros(self.n_dofs, dtype=bool)
        dof_of_name = {name: k for k, name in enumerate(self.dof_names)}
        for i, joint in enumerate(spec.joints, start=1):
            self._parent[i] = self._link_index[joint.parent]
            self._R_origin[i] = rpy_to_matrix(np.array(joint.origin_rpy))
            self._p_origin[i] = joint.origin_xyz
            if joint.movable:
                k = dof_of_name[joint.name]
                self._dof_link[k], self._link_dof[i], self._axis[k] = i, k, joint.axis
                self._revolute[k] = joint.type != "prismatic"
        self._ancestor = np.zeros((n, self.n_dofs), dtype=bool)  # DOF k moves link i
        for i in range(1, n):
            self._ancestor[i] = self._ancestor[self._parent[i]]
            if self._link_dof[i] >= 0:
                self._ancestor[i, self._link_dof[i]] = True

    @property
    def fk_tables(self) -> FKTables:
        """What the FK kernels take."""
        return self._fk

    @property
    def jacobian_tables(self) -> JacobianTables:
        """What the Jacobian kernels take."""
        return self._jac

    @property
    def movable_links(self) -> np.ndarray:
        """True for links that some DOF moves (not the base nor links fixed to it). Shape (n_links,)."""
        return self._ancestor.any(axis=1)

    def links_moved_by(self, dof: int) -> np.ndarray:
        """Indices of the links that DOF ``dof`` moves (its joint's child and everything below it)."""
        return np.flatnonzero(self._ancestor[:, dof])

    @property
    def revolute(self) -> np.ndarray:
        """True for revolute and continuous DOFs, False for prismatic ones. Shape (n_dofs,)."""
        return self._revolute

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf(cls, path: str, package_dirs: Sequence[str] | None = None,
                  xacro_args: Mapping[str, object] | None = None) -> KinematicModel:
        """Load a URDF file, or a ``.xacro`` file expanded with ``xacro_args`` (``$(find pkg)`` looked
        up in ``package_dirs`` and ``ROS_PACKAGE_PATH``). Kinematics never reads meshes, so absent
        meshes are fine here."""
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"from_urdf takes a file path, got {type(path).__name__} {path!r:.60}")
        return cls(parse_urdf(path, package_dirs, xacro_args))

    @classmethod
    def from_urdf_string(cls, text: str) -> KinematicModel:
        """Load URDF XML text."""
        if not isinstance(text, str):
            raise InputError(f"from_urdf_string takes the URDF's XML text (a str), got {type(text).__name__}")
        return cls(parse_urdf_string(text))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, n_dofs={self.n_dofs}, n_links={self.n_links})"

    # ------------------------------------------------------------------ names
    def link_index(self, link: LinkRef) -> int:
        """Index of a link given by name (or index). Raises UnknownNameError listing valid names."""
        if isinstance(link, (int, np.integer)) and not isinstance(link, bool):
            if 0 <= link < self.n_links:
                return int(link)
        elif isinstance(link, str) and link in self._link_index:
            return self._link_index[link]
        raise UnknownNameError("link", link, self.link_names)

    def dof_index(self, joint: str) -> int:
        """Index of a DOF given by joint name. Raises UnknownNameError listing valid DOF names."""
        if joint in self.dof_names:
            return self.dof_names.index(joint)
        raise UnknownNameError("joint", joint, self.dof_names)

    def check_q(self, q: object, name: str = "q") -> np.ndarray:
        """``q`` as a finite float array of shape (..., n_dofs)."""
        arr = as_float_array(q, name)
        if arr.ndim == 0 or arr.shape[-1] != self.n_dofs:
            raise InputError(
                f"{name} must have shape (..., {self.n_dofs}) for the DOFs {list(self.dof_names)}, got shape {arr.shape}"
            )
        return check_finite(arr, name)

    # ------------------------------------------------------------------ kinematics
    def link_frames(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rotations and origins of every link frame (unchecked ``q``, for hot loops).

        Args:
            q: Joint positions. Shape (..., n_dofs).
        Returns:
            ``(R, p)`` of shapes (..., n_links, 3, 3) and (..., n_links, 3), base frame.
        """
        batch = q.shape[:-1]
        q2 = np.ascontiguousarray(q, dtype=float).reshape(-1, self.n_dofs)
        if self._fk_entry is None:  # then the compiled FK is called directly (no per-call argument typing)
            self._fk_entry = entry_point(link_frames_kernel, (q2, self._fk))
        R, p = self._fk_entry(q2, self._fk)
        return R.reshape(batch + R.shape[1:]), p.reshape(batch + p.shape[1:])

    def forward_kinematics(self, q: object, links: Sequence[LinkRef] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Poses of link frames in the base frame.

        Args:
            q: Joint positions. Shape (..., n_dofs), any leading batch shape.
            links: Link names (or indices) to return, in that order; None for all links.
        Returns:
            ``(pos, quat)``: shapes (..., n_sel, 3) [m] and (..., n_sel, 4) (w, x, y, z).
        """
        q = self.check_q(q)
        if links is not None and (isinstance(links, (str, int)) or not hasattr(links, "__iter__")):
            raise InputError(f"links must be a list of link names or indices (or None for all), got {links!r:.60}")
        idx = list(range(self.n_links)) if links is None else [self.link_index(l) for l in links]
        R, p = self.link_frames(q)
        return p[..., idx, :].copy(), matrix_to_quat(R[..., idx, :, :])

    def jacobian_from_frames(self, R: np.ndarray, p: np.ndarray, link: int, local_point: np.ndarray | None = None) -> np.ndarray:
        """Geometric Jacobian from precomputed frames (see :meth:`link_frames`).

        Args:
            R, p: Link frames. Shapes (..., n_links, 3, 3) and (..., n_links, 3).
            link: Link index.
            local_point: Point in the link frame [m]. Shape (3,) or (..., 3); None for the origin.
        Returns:
            Shape (..., 6, n_dofs): rows 0-2 linear [m/s], 3-5 angular [rad/s], base frame.
        """
        batch = p.shape[:-2]
        R2 = R.reshape((-1,) + R.shape[-3:])
        p2 = p.reshape((-1,) + p.shape[-2:])
        lp = np.zeros(3) if local_point is None else local_point
        lp = kernel_array(np.broadcast_to(lp, batch + (3,)).reshape(-1, 3))
        args = (np.ascontiguousarray(R2), np.ascontiguousarray(p2), int(link), lp, self._jac)
        if self._jac_entry is None:
            self._jac_entry = entry_point(jacobian_kernel, args)
        J = self._jac_entry(*args)
        return J.reshape(batch + (6, self.n_dofs))

    def point_jacobians(self, R: np.ndarray, p: np.ndarray, links: np.ndarray, points: np.ndarray,
                        configs: np.ndarray | None = None) -> np.ndarray:
        """Jacobians of base-frame points attached to links (unchecked, for hot loops).

        Args:
            R, p: Link frames (see :meth:`link_frames`) of one configuration, shapes (n_links, 3, 3) and
                (n_links, 3), or of B configurations, (B, n_links, 3, 3) and (B, n_links, 3).
            links: Link index of each point. Shape (K,).
            points: The points in the base frame [m]. Shape (K, 3).
            configs: Which configuration each point belongs to (with B configurations). Shape (K,).
        Returns:
            Shape (K, 6, n_dofs).
        """
        links = np.asarray(links, dtype=np.int64)
        if R.ndim == 3:
            R, p = R[None], p[None]
        configs = np.zeros(len(links), dtype=np.int64) if configs is None else np.asarray(configs, dtype=np.int64)
        return point_jacobians_kernel(np.ascontiguousarray(R), np.ascontiguousarray(p), configs, links,
                                      np.ascontiguousarray(points, dtype=float), self._jac)

    def get_jacobian(self, q: object, link: LinkRef, local_point: object | None = None) -> np.ndarray:
        """Geometric Jacobian of a point on a link.

        Args:
            q: Joint positions. Shape (..., n_dofs).
            link: Link name (or index).
            local_point: Point in the link frame [m], shape (3,); None for the link origin.
        Returns:
            Shape (..., 6, n_dofs): rows 0-2 linear, 3-5 angular, in the base frame.
        """
        q = self.check_q(q)
        idx = self.link_index(link)
        lp = None if local_point is None else as_point(local_point, "local_point")
        R, p = self.link_frames(q)
        return self.jacobian_from_frames(R, p, idx, lp)

    def clip(self, q: np.ndarray) -> np.ndarray:
        """``q`` clipped into the joint limits. Shape (..., n_dofs)."""
        return np.minimum(np.maximum(q, self.q_lower), self.q_upper)  # np.clip costs 3x more on small arrays

    def mid_config(self) -> np.ndarray:
        """Mid-point of the joint limits (0 for unlimited joints). Shape (n_dofs,); a fresh copy."""
        return self._mid.copy()

    def check_window(self, q: np.ndarray, name: str = "qpos", dofs: Sequence[int] | None = None,
                     tol: float = WINDOW_TOL) -> np.ndarray:
        """``q`` (..., len(dofs)) inside the joint windows of ``dofs`` (None: all), clipped into them.

        Raises:
            InputError: a value more than ``tol`` outside its window, naming the DOF, the value and the window.
        """
        dofs = np.arange(self.n_dofs) if dofs is None else np.asarray(dofs)
        lo, hi = self.q_lower[dofs], self.q_upper[dofs]
        bad = np.argwhere((q < lo - tol) | (q > hi + tol))
        if len(bad):
            *row, k = bad[0]
            raise InputError(f"{name}{list(map(int, row)) if row else ''}: DOF '{self.dof_names[dofs[k]]}' = "
                             f"{float(q[tuple(bad[0])]):.6g} is outside its joint window [{lo[k]:.6g}, {hi[k]:.6g}] "
                             f"({len(bad)} value(s) outside)")
        return np.minimum(np.maximum(q, lo), hi)
