"""A fixed camera's backdrop: the scene's boxes (floor, tables, obstacles), which never move, rendered once.

TinyRenderer without shadows shades each body alone, so the picture of a scene is the picture of its boxes
and the picture of everything else laid over each other by depth (:meth:`app.sim.camera.Camera.frame`). A
video renders the boxes once, in a PyBullet client of their own, hides them in its scene, and then renders
only the arms and objects every frame: ~35 -> ~20 ms a 640x480 frame of 16 arms on their tables, the same
pixels (tests/test_backdrop.py).
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from app.sim.camera import Camera, Layer
from app.sim.scene import Scene

HIDDEN = (1.0, 1.0, 1.0, 0.0)  # TinyRenderer skips a shape whose colour has alpha 0


def render_backdrop(scene: Scene, view: np.ndarray, projection: np.ndarray, width: int, height: int) -> Layer:
    """The picture of ``scene``'s boxes alone (a built scene; every environment's copy) through the camera of
    :class:`app.sim.camera.Camera` with these arguments."""
    boxes = Scene(gui=False)
    try:
        for box in scene.boxes:
            boxes.add_box(box)
        boxes.build(n_envs=len(scene.env_origins), env_origins=scene.env_origins)
        return Camera(boxes.client, view, projection, width, height).layer()
    finally:
        boxes.close()


def show_boxes(scene: Scene, visible: bool) -> None:
    """Show or hide (in pictures only: they still collide) every copy of ``scene``'s boxes."""
    for box in scene.boxes:
        for body in scene.box_ids[box.name]:
            pb.changeVisualShape(body, -1, rgbaColor=list(box.rgba if visible else HIDDEN),
                                 physicsClientId=scene.client)
