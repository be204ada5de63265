"""A fixed camera's backdrop: the scene's boxes (floor, tables, obstacles), which never move, rendered once.

TinyRenderer without shadows shades each body alone, so the picture of a scene is the picture of its boxes
and the picture of everything else laid over each other by depth (:meth:`app.sim.camera.Camera.over`). The
video (app.episode.frame_render) and a recording's and an environment's cameras (app.sim.cameras.SceneCameras
with backdrops) render the boxes once per fixed view, in a PyBullet client of their own (:class:`Backdrops`),
hide them in their replica, and then render only the arms and objects every frame: the same pixels and depths
(tests/test_backdrop.py).
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


class Backdrops:
    """The backdrops of the views a replica (a scene drawn only by its owner: app.episode.replica) is drawn from: a
    fixed view's boxes rendered once and then hidden in the scene, so that its pictures render only what moves
    (:meth:`app.sim.camera.Camera.over`); for a view that moves (a camera on a link) or a look other than plain
    (shadows fall across bodies; textures, light), none, and the boxes shown."""

    def __init__(self, scene: Scene):
        self.scene, self.enabled = scene, scene.look.is_plain()
        self._layers: dict[tuple, Layer] = {}
        self._hidden = False

    def for_view(self, view: np.ndarray, projection: np.ndarray, width: int, height: int,
                 fixed: bool = True) -> Layer | None:
        """The backdrop of the view (view and projection (4, 4), as :class:`app.sim.camera.Camera` takes them, and
        the picture's size), the boxes hidden; None, the boxes shown, where ``fixed`` is False or the look not
        plain."""
        use = fixed and self.enabled
        if use != self._hidden:
            show_boxes(self.scene, not use)
            self._hidden = use
        if not use:
            return None
        view, projection = np.asarray(view, dtype=float), np.asarray(projection, dtype=float)
        key = (view.tobytes(), projection.tobytes(), int(width), int(height))
        if key not in self._layers:
            self._layers[key] = render_backdrop(self.scene, view, projection, width, height)
        return self._layers[key]


def show_boxes(scene: Scene, visible: bool) -> None:
    """Show or hide (in pictures only: they still collide) every copy of ``scene``'s boxes."""
    for box in scene.boxes:
        for body in scene.box_ids[box.name]:
            pb.changeVisualShape(body, -1, rgbaColor=list(box.rgba if visible else HIDDEN),
                                 physicsClientId=scene.client)
