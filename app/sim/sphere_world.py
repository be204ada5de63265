"""The scene as the collision model (app.collision) sees it: the table and boxes of a scene, moved into a robot's
base frame, as a World; the robot's sphere model against it (built once per set of names and pairs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.collision import CollisionModel, World, WorldBox, robot_spheres
from app.errors import InputError, UnknownNameError
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix


def scene_world(robot, names: Sequence[str] | None = None) -> World:
    """The scene's static boxes ``names`` (None: every box with a collision shape) in ``robot``'s base frame.

    ``robot`` is the scene robot (app.sim.robot.Robot) after ``scene.build``; boxes stand at the same place in
    every environment's frame, so one World serves all of them.
    """
    boxes = {b.name: b for b in robot.box_specs}
    wanted = [b.name for b in robot.box_specs] if names is None else list(names)
    unknown = [n for n in wanted if n not in boxes]
    if unknown:
        raise UnknownNameError(f"no box named {unknown[0]!r} in the scene; its boxes are {sorted(boxes)}")
    R_base, p_base = robot.base.R, robot.base.p
    out = []
    for name in wanted:
        box = boxes[name]
        if not box.collision:
            continue  # nothing touches it in the simulator either
        R = R_base.T @ quat_to_matrix(np.asarray(box.quat, dtype=float) / np.linalg.norm(box.quat))
        pos = R_base.T @ (np.asarray(box.pos, dtype=float) - p_base)
        out.append(WorldBox(name, tuple(np.asarray(box.size, dtype=float) / 2), tuple(pos), tuple(matrix_to_quat(R))))
    return World(boxes=tuple(out))


def sphere_model(robot, names: Sequence[str] | None = None,
                 self_pairs: Sequence[tuple[str, str]] | None = None) -> CollisionModel:
    """``robot``'s spheres against the scene's boxes ``names`` (None: all), checking ``self_pairs`` of its links
    (None: the pairs sampled with the spheres)."""
    spheres = robot_spheres(robot.urdf, robot.package_dirs, text=robot.description_text, pairs=self_pairs is None)
    return CollisionModel(robot.model, spheres, scene_world(robot, names), self_pairs)


def inverse_kinematics_avoiding(robot, link: str, pos, quat, init_qpos, envs_idx, kwargs: dict):
    """The scene robot's ``inverse_kinematics(..., avoid_collisions=True)``: environment-frame targets of the
    addressed environments -> base frame -> app.ik.collision_free against the scene's boxes (``collision``: a
    CollisionModel of the caller's instead) with the sampled self pairs. Returns a CollisionFreeResult with
    one row per addressed environment ([n_envs,] leading axis as the robot's other calls)."""
    from app.validation import as_quaternions
    envs = robot.envs(envs_idx)
    collision = kwargs.pop("collision", None)
    collision = robot.sphere_model() if collision is None else collision
    if not isinstance(collision, CollisionModel):
        raise InputError(f"collision must be a CollisionModel (robot.sphere_model(...)), got {collision!r:.80}")
    p = envs.rows(pos, "pos", 3)
    q = envs.rows(quat, "quat", 4)
    p_b, q_b = robot.base.targets_to_base(p, as_quaternions(q, "quat"))
    init = robot.get_qpos(envs_idx=envs_idx) if init_qpos is None else envs.out(envs.rows(init_qpos, "init_qpos",
                                                                                          robot.n_dofs))
    if not np.array_equal(robot.base.R, np.eye(3)):
        kwargs = dict(kwargs, frame_rotation=robot.base.R)
    res = robot.model.inverse_kinematics(link, p_b, q_b, avoid_collisions=True, collision=collision,
                                         init_qpos=np.asarray(init, dtype=float).reshape(-1, robot.n_dofs),
                                         return_info=True, **kwargs)
    return type(res)(envs.out(res.q), envs.out(res.collision_free), envs.out(res.reached),
                     res.closest if robot.batched else res.closest[0])
