"""The scene as the collision model (app.collision) sees it: the table and boxes of a scene, moved into a robot's
base frame, and its objects, as a World; the robot's sphere model against it (built once per set of names and
pairs); each tick the objects' poses read from the simulator (SceneObjects), held ones attached to the gripper."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.collision import CollisionModel, ObjectPoses, World, WorldBox, holding_links, object_spheres, robot_spheres
from app.errors import InputError, UnknownNameError
from app.ik.limits.distance import GraspState
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
        raise UnknownNameError("box", unknown[0], sorted(boxes))
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


SPHERE_SHAPES = ("box", "cylinder", "sphere")  # objects the spheres fit; files stay with PyBullet's closest points


def sphere_model(robot, names: Sequence[str] | None = None,
                 self_pairs: Sequence[tuple[str, str]] | None = None, objects: Sequence[str] = ()) -> CollisionModel:
    """``robot``'s spheres against the scene's boxes ``names`` (None: all) and its objects ``objects`` (primitives,
    SPHERE_SHAPES; their poses come each tick from :class:`SceneObjects`), checking ``self_pairs`` of its links
    (None: the pairs sampled with the spheres)."""
    spheres = robot_spheres(robot.urdf, robot.package_dirs, text=robot.description_text, pairs=self_pairs is None)
    moving = []
    for name in objects:
        if name not in robot.objects:
            raise UnknownNameError("object", name, sorted(robot.objects))
        spec = robot.objects[name].spec
        moving.append(object_spheres(name, spec.shape, spec.half_extents()))
    world = scene_world(robot, names)
    return CollisionModel(robot.model, spheres, world._replace(objects=tuple(moving)), self_pairs)


class SceneObjects:
    """Each tick, the poses of a sphere model's objects as the simulator has them, and the pairs left unwatched.

    An object that the motion's ``grasp.holding[env]`` names (object name -> the arm of the gripper holding it, ''
    for a robot's one gripper) is given in the frame of the link that carries that gripper's fingers, so its rows
    move with the link (checked against the world and the other links, not against the fingers, that link, its
    parent or what hangs below it); a released object (``grasp.released[env]``) is not checked against any
    gripper's fingers.
    """

    def __init__(self, robot, collision: CollisionModel):
        self.robot, self.names = robot, collision.object_names
        self.objects = [robot.objects[n] for n in self.names]
        model, bodies = robot.model, {a for pair in collision.pair_names for a in pair}
        fingers = {model.link_names[i] for g in robot.grippers.values() for i in g.links} & bodies
        self.finger_pairs = {n: frozenset((f, n) for f in fingers) for n in self.names}
        self.carrier, self.held_pairs = {}, {}  # arm -> link index; (arm, object) -> pairs skipped while held
        parent = model.fk_tables.parent
        for arm, g in robot.grippers.items():
            outside = sorted({int(parent[i]) for i in g.links} - {int(i) for i in g.links})
            link = self.carrier[arm] = outside[0]
            near = holding_links(model, link)
            for n in self.names:
                self.held_pairs[arm, n] = frozenset((a, n) for a in near & bodies)

    def __call__(self, q: np.ndarray, grasp: GraspState) -> tuple[ObjectPoses, list[frozenset]]:
        """At the measured joints q (n_envs, n_dofs): ObjectPoses (n_envs rows, base frame or the carrying link's)
        and per environment the (a, b) pairs left unwatched (the grasp's released pairs too)."""
        r = self.robot
        n, M = r.n_envs, len(self.objects)
        R_o, p_o, link = np.empty((n, M, 3, 3)), np.empty((n, M, 3)), np.full((n, M), -1, dtype=np.int64)
        R_b, p_b = r.base.R, r.base.p
        for m, obj in enumerate(self.objects):
            pos, quat = obj.poses()
            R_o[:, m], p_o[:, m] = R_b.T @ quat_to_matrix(quat), (pos - p_b) @ R_b
        skipped = [set(pairs) for pairs in grasp.released_pairs]
        held = [(e, m, arm) for e, holding in enumerate(grasp.holding) for m, name in enumerate(self.names)
                if (arm := holding.get(name)) is not None]
        if held:
            R_l, p_l = r.model.link_frames(q)
        for e, m, arm in held:
            l = link[e, m] = self.carrier[arm]
            R_o[e, m], p_o[e, m] = R_l[e, l].T @ R_o[e, m], R_l[e, l].T @ (p_o[e, m] - p_l[e, l])
            skipped[e] |= self.held_pairs[arm, self.names[m]]
        for e, released in enumerate(grasp.released):
            for name in released:
                skipped[e] |= self.finger_pairs.get(name, frozenset())
        return ObjectPoses(R_o, p_o, link), [frozenset(s) for s in skipped]


def inverse_kinematics_avoiding(robot, link, pos, quat, init_qpos, envs_idx, kwargs: dict):
    """The scene robot's ``inverse_kinematics(..., avoid_collisions=True)`` (``link`` a name, ``pos``, ``quat`` its
    target) and ``inverse_kinematics_multilink(..., avoid_collisions=True)`` (``link`` a list of names, ``pos``,
    ``quat`` one target per link): environment-frame targets of the addressed environments -> base frame ->
    app.ik.collision_free (or collision_free_arms) against the scene's boxes (``collision``: a CollisionModel of the
    caller's instead) with the sampled self pairs. Returns a CollisionFreeResult with one row per addressed
    environment ([n_envs,] leading axis as the robot's other calls)."""
    from app.validation import as_quaternions
    envs = robot.envs(envs_idx)
    collision = kwargs.pop("collision", None)
    collision = robot.sphere_model() if collision is None else collision
    if not isinstance(collision, CollisionModel):
        raise InputError(f"collision must be a CollisionModel (robot.sphere_model(...)), got {collision!r:.80}")
    several = isinstance(link, (list, tuple))
    if several and (pos is None or quat is None or len(pos) != len(link) or len(quat) != len(link)):
        raise InputError(f"avoid_collisions needs a full pose per link: poss and quats with {len(link)} entries")
    targets = [robot.base.targets_to_base(envs.rows(p, "pos", 3), as_quaternions(envs.rows(q, "quat", 4), "quat"))
               for p, q in (zip(pos, quat) if several else [(pos, quat)])]
    init = robot.get_qpos(envs_idx=envs_idx) if init_qpos is None else envs.out(envs.rows(init_qpos, "init_qpos",
                                                                                          robot.n_dofs))
    if not np.array_equal(robot.base.R, np.eye(3)):
        kwargs = dict(kwargs, frame_rotation=robot.base.R)
    common = dict(avoid_collisions=True, collision=collision, return_info=True,
                  init_qpos=np.asarray(init, dtype=float).reshape(-1, robot.n_dofs), **kwargs)
    if several:
        res = robot.model.inverse_kinematics_multilink(link, [t[0] for t in targets], [t[1] for t in targets],
                                                       **common)
    else:
        res = robot.model.inverse_kinematics(link, *targets[0], **common)
    return type(res)(envs.out(res.q), envs.out(res.collision_free), envs.out(res.converged),
                     res.closest if robot.batched else res.closest[0])
