"""Each environment of a scene as a planner sees it: the scene's static boxes and every object where it is now in
that environment, in the robot's base frame (an app.collision World per environment), with an attached object
(Genesis's ``with_entity`` held by ``ee_link_name``) moving with its link at its relative pose now; and each
World as a CollisionModel of the robot's spheres (what app.planning's scene ``plan_path`` plans against).

Objects as obstacles: a box is its box, a sphere its sphere, a cylinder its bounding box (it encloses the
cylinder), a mesh or URDF object the box PyBullet gives as its axis-aligned bounding box now (world axes).
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app.collision import CollisionModel, HeldObject, World, WorldBox, WorldSphere, holding_links
from app.errors import InputError, UnknownNameError
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix
from app.sim.sphere_world import scene_world

FILE_SHAPES = ("mesh", "urdf")  # objects without primitive geometry here: PyBullet's AABB stands for them


def attached_object(robot, ee_link_name: object, with_entity: object):
    """The SceneObject ``with_entity`` (a SceneObject of the scene or its name) that ``ee_link_name`` carries,
    or None when both are None; InputError when only one is given (Genesis asserts the same), UnknownNameError
    for a link or object the scene does not have."""
    if ee_link_name is None and with_entity is None:
        return None
    if ee_link_name is None or with_entity is None:
        given, missing = ("with_entity", "ee_link_name") if ee_link_name is None else ("ee_link_name", "with_entity")
        raise InputError(f"{given} given without {missing}: an attached object needs both the link that carries "
                         "it (ee_link_name) and the object (with_entity)")
    robot.get_link(str(ee_link_name))  # UnknownNameError listing the links
    name = with_entity if isinstance(with_entity, str) else getattr(with_entity, "name", None)
    if name not in robot.objects or (not isinstance(with_entity, str) and robot.objects[name] is not with_entity):
        raise UnknownNameError("object (with_entity)", name if isinstance(name, str) else repr(with_entity)[:60],
                               sorted(robot.objects))
    return robot.objects[name]


def _box_in_world(obj, env: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R (3, 3), centre (3,), half (3,)) of the box standing for ``obj`` in environment ``env``, in that
    environment's frame: its own box for primitives (oriented with the body), PyBullet's AABB for files."""
    if obj.spec.shape in FILE_SHAPES:
        body, client = obj.body_ids[env], obj.client
        boxes = [pb.getAABB(body, link, physicsClientId=client)
                 for link in range(-1, pb.getNumJoints(body, physicsClientId=client))]
        lo = np.min([b[0] for b in boxes], axis=0) - obj.env_origins[env]
        hi = np.max([b[1] for b in boxes], axis=0) - obj.env_origins[env]
        return np.eye(3), (lo + hi) / 2, (hi - lo) / 2
    pos, quat = obj.poses()
    return quat_to_matrix(quat[env]), pos[env], obj.spec.half_extents()


def _obstacle(obj, env: int, base) -> WorldBox | WorldSphere:
    """``obj`` of environment ``env`` as a static primitive in the base frame ``base`` (BaseFrame)."""
    if obj.spec.shape == "sphere":
        pos = obj.poses()[0][env]
        return WorldSphere(obj.name, tuple((pos - base.p) @ base.R), float(obj.spec.radius))
    R, centre, half = _box_in_world(obj, env)
    return WorldBox(obj.name, tuple(half), tuple((centre - base.p) @ base.R), tuple(matrix_to_quat(base.R.T @ R)))


def _held(robot, obj, env: int, link: str, q_now: np.ndarray) -> HeldObject:
    """``obj`` of environment ``env`` held by ``link`` where it is now relative to the link (joints q_now)."""
    R_e, centre, half = _box_in_world(obj, env)
    base = robot.base
    R_b, p_b = base.R.T @ R_e, (centre - base.p) @ base.R
    R_l, p_l = robot.model.link_frames(q_now[None])
    li = robot.model.link_index(link)
    R, p = R_l[0, li], p_l[0, li]
    return HeldObject(obj.name, link, tuple(half), tuple(R.T @ (p_b - p)), tuple(matrix_to_quat(R.T @ R_b)))


def env_worlds(robot, envs: np.ndarray, world: World, attached=None, link: str | None = None) -> list[World]:
    """Per environment of ``envs`` (k,): ``world`` (the scene's static boxes, base frame) plus every object where
    it is now in that environment; ``attached`` (a SceneObject) held by ``link`` instead, at its pose now."""
    q_now = robot.read_states()[0]
    out = []
    for e in envs:
        obstacles = [_obstacle(o, int(e), robot.base) for o in robot.objects.values() if o is not attached]
        boxes = world.boxes + tuple(o for o in obstacles if isinstance(o, WorldBox))
        spheres = world.spheres + tuple(o for o in obstacles if isinstance(o, WorldSphere))
        held = None if attached is None else _held(robot, attached, int(e), link, q_now[int(e)])
        out.append(World(boxes=boxes, spheres=spheres, held=held))
    return out


def touching_now(model, spheres, world: World, q_now: np.ndarray) -> World:
    """``world`` whose held object also skips the links that touch it at q_now (n_dofs,) by the spheres (its
    holding link, that link's parent and what hangs below it are skipped anyway): Genesis leaves out the contacts
    an attached object has at the start, the fingers around it."""
    held = world.held
    if held is None:
        return world
    cm = CollisionModel(model, spheres, world)
    d, _ = cm.distances(q_now[None], with_gradient=False)
    near = {a for (a, b), dist in zip(cm.pair_names, d[0]) if b == held.name and dist <= 0.0}
    touching = tuple(sorted(near | holding_links(model, model.link_index(held.link))))
    return world._replace(held=held._replace(touching=touching))


def scene_collisions(robot, envs_idx: object = None, ee_link_name: object = None,
                     with_entity: object = None) -> dict[int, CollisionModel]:
    """The scene robot's ``planning_collisions`` (app.sim.robot.Robot): environment index -> the robot's spheres
    (its sampled self pairs) against that environment's World (:func:`env_worlds`: every collision box of the
    scene, every object where it is now, the attached one held), in the order ``envs_idx`` addresses them."""
    envs = robot.envs(envs_idx)
    attached = attached_object(robot, ee_link_name, with_entity)
    spheres = robot.planning_spheres()
    q_now = robot.read_states()[0]
    worlds = env_worlds(robot, envs.idx, scene_world(robot), attached, None if attached is None else str(ee_link_name))
    return {int(e): CollisionModel(robot.model, spheres, touching_now(robot.model, spheres, w, q_now[int(e)]))
            for e, w in zip(envs.idx, worlds)}
