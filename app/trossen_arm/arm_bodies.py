"""The simulated arms' bodies in a PyBullet scene: the world's (stepped) and the video's replica (posed) are
built by the same two functions, so both hold the same arms at the same places over the same boxes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.sim.robot import Robot
from app.sim.scene import Scene
from app.specs import BoxSpec
from app.trossen_arm.layout import ArmPlace, arm_urdf


def arms_scene(boxes: Sequence[BoxSpec], gui: bool, dt: float) -> Scene:
    """A built scene of ``boxes`` with physics step ``dt`` [s]; ``gui``: PyBullet's window (needs a display)."""
    scene = Scene(gui=gui, dt=dt)
    for box in boxes:
        scene.add_box(box)
    scene.build()
    return scene


def add_arm(scene: Scene, place: ArmPlace) -> Robot:
    """The arm of ``place`` loaded into the built ``scene`` (one environment, unbatched), at its base pose."""
    robot = Robot(scene.client, place.urdf or arm_urdf(), place.base_pos, place.base_quat, None)
    robot.build(np.zeros((1, 3)), batched=False, box_ids=scene.box_ids, box_specs=scene.boxes)
    scene.robots.append(robot)
    return robot
