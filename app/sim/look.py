"""A built scene dressed in its look (app.specs.LookSpec): the tabletop's and the floor's textures loaded into its
PyBullet client and put on every environment's copy; the lighting keywords kept on the scene for its cameras
(``scene.look``; app.sim.camera.Camera takes them)."""

from __future__ import annotations

import dataclasses

import pybullet as pb

from app.errors import InputError
from app.sim.scene import Scene
from app.specs.look_spec import LookSpec

WHITE = (1.0, 1.0, 1.0)


def apply_look(scene: Scene, look: LookSpec, boxes: dict[str, str | None]) -> None:
    """Texture the boxes ``boxes`` names ({'table': box name or None, 'floor': ...}) with the look's textures
    (the table's tinted by ``table_tint``), colour the robots' links ``robot_rgb`` (where given), and keep the look
    on the scene."""
    resolved = look.resolved()
    scene.look = resolved
    if resolved.robot_rgb is not None:
        for robot in scene.robots:
            for loaded in robot.bodies:
                for link in range(-1, pb.getNumJoints(loaded.body_id, physicsClientId=scene.client)):
                    pb.changeVisualShape(loaded.body_id, link, rgbaColor=[*resolved.robot_rgb, 1.0],
                                         physicsClientId=scene.client)
    for which, name in boxes.items():
        path = resolved.texture_file(which)
        if name is None or path is None:
            continue
        texture = pb.loadTexture(str(path), physicsClientId=scene.client)
        if texture < 0:
            raise InputError(f"look.{which}_texture: PyBullet cannot load {path} as a texture (a PNG is needed)")
        tint = resolved.table_tint if which == "table" else WHITE
        k = next(i for i, b in enumerate(scene.boxes) if b.name == name)
        scene.boxes[k] = dataclasses.replace(scene.boxes[k], rgba=(*tint, 1.0))  # the colour it is drawn with
        for body in scene.box_ids[name]:
            pb.changeVisualShape(body, -1, textureUniqueId=texture, rgbaColor=[*tint, 1.0],
                                 physicsClientId=scene.client)
