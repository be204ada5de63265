"""The scene as the collision model (app.collision) sees it: the table and boxes of a scene, moved into a robot's
base frame, as a World; the robot's sphere model against it (built once per set of names and pairs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.collision import CollisionModel, World, WorldBox, collision_model
from app.errors import UnknownNameError
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
    return collision_model(robot.model, scene_world(robot, names), robot.package_dirs, text=robot.description_text,
                           self_pairs=self_pairs)
