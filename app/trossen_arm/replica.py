"""A copy of the simulated arms posed from recorded joints, stepped never: headless, the one the video draws
(app.episode.frame_render's Replica); in a window, the one the GUI shows (app.trossen_arm.live_view). The same
arms at the same places over the same boxes as the world, built by app.trossen_arm.arm_bodies."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.specs import BoxSpec
from app.trossen_arm.arm_bodies import add_arm, arms_scene
from app.trossen_arm.layout import ArmPlace


class ArmsReplica:
    """The arms of ``places`` over ``boxes`` in a scene of their own; ``gui``: in PyBullet's window.

    Attributes:
        scene: Its app.sim Scene. robot: None (no link camera, no collision spheres). robots: One per place.
    """

    def __init__(self, places: tuple[ArmPlace, ...], boxes: tuple[BoxSpec, ...], gui: bool = False):
        self.scene = arms_scene(boxes, gui=gui, dt=1e-3)
        self.robots = []
        self.robot = None
        for place in places:
            self.add(place)

    def add(self, place: ArmPlace) -> None:
        """One more arm (the last of :meth:`pose`'s rows)."""
        with self.scene.rendering_paused():
            self.robots.append(add_arm(self.scene, place))

    def pose(self, q: np.ndarray, objects: np.ndarray | None = None) -> np.ndarray:
        """Arm i at rest at robot DOFs q[i, :its n_dofs] (q: (n_arms, n) with n at least each arm's DOFs); the
        arms have no objects (``objects`` is ignored). Returns q as float."""
        q = np.asarray(q, dtype=float)
        for i, robot in enumerate(self.robots):
            n = robot.n_dofs
            robot.teleport(q[i:i + 1, :n], np.zeros((1, n)), np.array([0]))
        return q

    def close(self) -> None:
        self.scene.close()


class ArmsScene(NamedTuple):
    """What a render process builds (picklable): calling it gives the :class:`ArmsReplica` of these arms."""

    places: tuple[ArmPlace, ...]
    boxes: tuple[BoxSpec, ...]

    def __call__(self) -> ArmsReplica:
        return ArmsReplica(self.places, self.boxes)
