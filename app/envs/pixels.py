"""The cameras an environment observes, rendered every step: the scene's named cameras (``cameras:``; a scene
without any gets one default ``cam_high``), at the size the options ask, in a one-environment copy of the scene
posed from each environment's state (app.episode.replica.PosedReplica), so a picture shows its own environment
only, as a recording's cameras do."""

from __future__ import annotations

import dataclasses

import numpy as np

from app.config.schema import RunConfig
from app.envs.options import EnvOptions
from app.episode.replica import PosedReplica
from app.errors import InputError
from app.sim.cameras import SceneCameras
from app.specs import CameraStream


def observed_cameras(run: RunConfig, options: EnvOptions) -> list[CameraStream]:
    """The streams observed: the scene's (all, or those ``options.cameras`` names), each at ``options.image_size``
    where given; InputError for a name the scene does not have."""
    streams = list(run.scene_config.cameras) or [CameraStream()]
    if options.cameras is not None and not options.cameras:
        raise InputError(f"cameras=[]: obs_type {options.obs_type!r} observes pictures, so it needs at least one "
                         f"camera (None: all of the scene's, {[c.name for c in streams]})")
    if options.cameras is not None:
        names = [c.name for c in streams]
        missing = [name for name in options.cameras if name not in names]
        if missing:
            raise InputError(f"cameras {missing} are not cameras of the scene; it has {names}")
        streams = [c for c in streams if c.name in options.cameras]
    if options.image_size is not None:
        h, w = options.image_size
        streams = [dataclasses.replace(c, height=h, width=w) for c in streams]
    return streams


class Pixels:
    """Renders ``cameras`` for every environment of a world (app.envs.world.EnvWorld)."""

    def __init__(self, world, cameras: list[CameraStream]):
        self.world, self.cameras = world, list(cameras)
        self.replica = PosedReplica(world.run, n_envs=1)
        self.views = SceneCameras(self.replica.scene, self.replica.robot, self.cameras, backdrops=True)

    def render(self, q: np.ndarray, envs: list[int] | None = None,
               places: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """{camera: (len(envs), h, w, 3) uint8} of the environments ``envs`` (default all) at the world's joints
        q (n_envs, n_dofs) and object poses, each place target of ``places`` (n_envs, 2) [m] (None: none) a disc
        on the table (app.episode.replica.PLACE_DISC_RADIUS), so a policy that sees only pictures sees the goal."""
        envs = list(range(len(q))) if envs is None else list(envs)
        out = {c.name: np.empty((len(envs), c.height, c.width, 3), np.uint8) for c in self.cameras}
        objects = self.world.scene.object_poses()
        for row, e in enumerate(envs):
            q_e = self.replica.pose(q[e:e + 1], None if objects is None else objects[e:e + 1],
                                    None if places is None else places[e:e + 1])[0]
            for name, image in self.views.render(self.views.poses(q_e), 0).items():
                out[name][row] = image
        return out

    def close(self) -> None:
        self.replica.close()
