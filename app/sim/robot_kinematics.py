"""The scene robot's frames, forward kinematics, Jacobians and IK in each environment's frame (a part of
app.sim.robot.Robot), Genesis's names and arguments in Genesis's order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.errors import InputError
from app.sim.env_frames import as_indices, solve_in_envs
from app.sim.handles import Link
from app.sim.sphere_world import inverse_kinematics_avoiding


class RobotKinematics:
    """Robot's kinematic queries (mixed into app.sim.robot.Robot, whose model, base frame and state they use)."""

    def base_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """The base pose in every environment's frame: rotation (3, 3), origin (3,)."""
        return self.base.R, self.base.p

    def world_base_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """The base pose in the world (PyBullet's frame): rotation (3, 3), origins (n_envs, 3)."""
        return self.base.R, self.env_origins + self.base.p

    def forward_kinematics(self, qpos: object, qs_idx_local: object = None, links_idx_local: object = None,
                           envs_idx: object = None) -> tuple[np.ndarray, np.ndarray]:
        """Link poses in each environment's frame for ``qpos`` ([n_envs,] n_selected_qs); the qs not
        selected by ``qs_idx_local`` take the current state. Works without any IK call first.

        Returns:
            (links_pos ([n_envs,] n_links, 3), links_quat ([n_envs,] n_links, 4) wxyz), links as selected.
        """
        envs, qs = self.envs(envs_idx), self._dofs(qs_idx_local, "qs_idx_local")
        rows = envs.rows(qpos, "qpos", len(qs))
        q = np.array(rows, dtype=float) if qs_idx_local is None else self.read_states()[0][envs.idx]
        q[:, qs] = rows
        links = as_indices(links_idx_local, "links_idx_local", self.n_links, f"links {list(self.model.link_names)}")
        pos, quat = self.model.forward_kinematics(q, links.tolist())
        pos, quat = self.base.poses_from_base(pos, quat)
        return envs.out(pos), envs.out(quat)

    def get_links_pos(self, links_idx_local: object = None, envs_idx: object = None) -> np.ndarray:
        """Link origins at the current state, environment frame. Shape ([n_envs,] n_links, 3)."""
        return self.forward_kinematics(self.get_qpos(envs_idx=envs_idx), None, links_idx_local, envs_idx)[0]

    def get_links_quat(self, links_idx_local: object = None, envs_idx: object = None) -> np.ndarray:
        """Link orientations (w, x, y, z) at the current state. Shape ([n_envs,] n_links, 4)."""
        return self.forward_kinematics(self.get_qpos(envs_idx=envs_idx), None, links_idx_local, envs_idx)[1]

    def get_jacobian(self, link: Link | str, local_point: object | None = None, envs_idx: object = None) -> np.ndarray:
        """Geometric Jacobian at the current state (rows in the environment's frame). Shape ([n_envs,] 6, n_dofs)."""
        envs = self.envs(envs_idx)
        name = link.name if isinstance(link, Link) else link
        J = self.model.get_jacobian(self.read_states()[0][envs.idx], name, local_point)
        return envs.out(self.base.jacobian_from_base(J))

    # ------------------------------------------------------------------ inverse kinematics
    def inverse_kinematics(self, link: Link | str, pos: object = None, quat: object = None, local_point: object = None,
                           init_qpos: object = None, respect_joint_limit: bool = True, max_samples: int | None = None,
                           max_solver_iters: int | None = None, damping: float | None = None,
                           pos_tol: float | None = None, rot_tol: float | None = None, pos_mask=(True, True, True),
                           rot_mask=(True, True, True), max_step_size: float | None = None,
                           dofs_idx_local: object = None, return_error: bool = False, envs_idx: object = None, *,
                           return_info: bool = False, **kwargs):
        """Pose IK for the addressed environments, Genesis's arguments in Genesis's order (see
        app.ik.api.inverse_kinematics). ``pos`` ([n_envs,] 3) and ``quat`` ([n_envs,] 4) are in each
        environment's frame, so are ``pos_mask``'s axes and the errors; ``init_qpos`` defaults to the
        current joint positions. Returns q ([n_envs,] n_dofs) (and err ([n_envs,] 6)). With
        ``avoid_collisions=True`` (keywords ``min_distance`` [m], ``collision``: a CollisionModel, default
        :meth:`sphere_model` of every scene box): a configuration clear of the scene's boxes and of itself, or
        the closest miss (``return_info``: a CollisionFreeResult with collision_free and the closest pair)."""
        if "local_points" in kwargs:
            raise InputError("inverse_kinematics takes local_point (one point on the link); "
                             "local_points is inverse_kinematics_multilink's")
        if kwargs.pop("avoid_collisions", False):  # against the scene's boxes: app.sim.sphere_world
            name = link.name if isinstance(link, Link) else link
            genesis = {"pos_tol": pos_tol, "rot_tol": rot_tol, "max_solver_iters": max_solver_iters}
            kwargs.update({k: v for k, v in genesis.items() if v is not None})
            if tuple(rot_mask) != (True, True, True):
                kwargs["rot_mask"] = rot_mask
            result = inverse_kinematics_avoiding(self, name, pos, quat, init_qpos, envs_idx, kwargs)
            return result if return_info else result.q
        genesis = (respect_joint_limit, max_samples, max_solver_iters, damping, pos_tol, rot_tol, pos_mask, rot_mask,
                   max_step_size, dofs_idx_local)
        result = solve_in_envs(self, [link], [] if pos is None else [pos], [] if quat is None else [quat],
                             None if local_point is None else [local_point], init_qpos, genesis, envs_idx,
                             kwargs).one_link()
        return result if return_info else ((result.q, result.err) if return_error else result.q)

    def inverse_kinematics_multilink(self, links: Sequence[Link | str], poss: Sequence | None = None,
                                     quats: Sequence | None = None, local_points: Sequence | None = None,
                                     init_qpos: object = None, respect_joint_limit: bool = True,
                                     max_samples: int | None = None, max_solver_iters: int | None = None,
                                     damping: float | None = None, pos_tol: float | None = None,
                                     rot_tol: float | None = None, pos_mask=(True, True, True),
                                     rot_mask=(True, True, True), max_step_size: float | None = None,
                                     dofs_idx_local: object = None, return_error: bool = False,
                                     envs_idx: object = None, *, return_info: bool = False, **kwargs):
        """Multi-link IK for the addressed environments (see RobotModel.inverse_kinematics_multilink).
        Returns q ([n_envs,] n_dofs) (and err ([n_envs,] n_links, 6)). With ``avoid_collisions=True`` (a full pose
        per link; keywords ``min_distance``, ``arm_min_distance`` [m], ``collision``): the links solved together, clear
        of the scene's boxes, of each other and of themselves (app.ik.collision_free_arms), as
        :meth:`inverse_kinematics` says for one link."""
        if kwargs.pop("avoid_collisions", False):
            names = [link.name if isinstance(link, Link) else link for link in links]
            genesis = {"pos_tol": pos_tol, "rot_tol": rot_tol, "max_solver_iters": max_solver_iters}
            kwargs.update({k: v for k, v in genesis.items() if v is not None})
            result = inverse_kinematics_avoiding(self, names, poss, quats, init_qpos, envs_idx, kwargs)
            return result if return_info else result.q
        genesis = (respect_joint_limit, max_samples, max_solver_iters, damping, pos_tol, rot_tol, pos_mask, rot_mask,
                   max_step_size, dofs_idx_local)
        result = solve_in_envs(self, links, poss, quats, local_points, init_qpos, genesis, envs_idx, kwargs)
        return result if return_info else ((result.q, result.err) if return_error else result.q)
