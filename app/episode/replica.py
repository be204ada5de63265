"""A headless copy of a run's scene posed from recorded states: the one replica that the video's render processes
and a recording's cameras draw (no physics is stepped in it; nothing of it reaches the run's own scene)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.config.schema import RunConfig
from app.episode.scene_build import build_scene
from app.sim.markers import DiscMarker

MESH_RGB = (0.16, 0.16, 0.17)  # the WidowX AI's black, where the look gives no robot_rgb
PLACE_DISC_RADIUS = 0.02  # [m]: the place target's disc in camera images, smaller than the 5 cm cube it awaits


def headless(run: RunConfig) -> RunConfig:
    """The run as a replica builds it: no GUI, no video of its own, the look's robot drawn (its description as
    the loader read it, app.config.look_robot) in place of the scene's."""
    run = replace(run, video=replace(run.video, enabled=False))
    scene = run.scene_config
    if scene.drawn is None:
        return run
    look = scene.look if scene.look.robot_rgb is not None else replace(scene.look, robot_rgb=MESH_RGB)
    robot = replace(scene.robot, urdf=scene.look.robot_urdf, package_dirs=scene.look.robot_package_dirs)
    return replace(run, scene_config=replace(scene, robot=robot, description=scene.drawn, look=look))


class PosedReplica:
    """The scene of ``run`` (``n_envs`` environments: default the run's) built headless, to be posed and drawn.

    Attributes:
        scene, robot: The replica's Scene and its robot (app.sim).
    """

    def __init__(self, run: RunConfig, n_envs: int | None = None):
        run = headless(run) if n_envs is None else replace(headless(run), n_envs=n_envs)
        self.scene, self.robot = build_scene(run, gui=False)
        self._envs = np.arange(self.robot.n_envs)
        table = run.scene_config.table
        self._surface = table.top() if table is not None else 0.0  # [m]: where a place target's disc lies
        self._discs: list | None = None

    def pose(self, q: np.ndarray, objects: np.ndarray | None, places: np.ndarray | None = None) -> np.ndarray:
        """Every environment at joints q (n_envs, n_dofs) at rest, each object at its pose ``objects`` (n_envs,
        n_objects, 7: position [m], quat wxyz, environment frames; None: where they are), and where ``places``
        (n_envs, 2) [m] is given, a place target's disc (PLACE_DISC_RADIUS) on the table at each. Returns q as
        float."""
        q = np.asarray(q, dtype=float).reshape(self.robot.n_envs, -1)
        self.robot.teleport(q, np.zeros_like(q), self._envs)
        if objects is not None:
            for k, obj in enumerate(self.scene.objects.values()):
                obj.set_pose(obj.envs(None).out(objects[:, k, :3]), obj.envs(None).out(objects[:, k, 3:]))
        if places is not None:
            self._mark(np.asarray(places, dtype=float).reshape(self.robot.n_envs, 2))
        return q

    def _mark(self, places: np.ndarray) -> None:
        if self._discs is None:
            self._discs = [DiscMarker(self.scene.client, PLACE_DISC_RADIUS) for _ in self._envs]
        for disc, origin, xy in zip(self._discs, self.scene.env_origins, places):
            disc.place(origin + [xy[0], xy[1], self._surface])

    def close(self) -> None:
        self.scene.close()
