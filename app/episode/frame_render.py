"""One video frame's picture: a replica of the scene posed from a FrameState, rendered (TinyRenderer, the boxes
as a backdrop from a fixed view), with the overlay (targets, status dots, caption) drawn on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

import numpy as np

from app.config.schema import RunConfig
from app.control.phases import REASONS, code_label
from app.control.status import EnvStatus
from app.episode.frame_state import FrameState
from app.episode.replica import PosedReplica
from app.kinematics.rotations import quat_to_matrix
from app.render.framing import CameraView
from app.render.overlay import FrameOverlay, OverlayStyle, draw_overlay
from app.sim.backdrop import Backdrops
from app.sim.camera import Camera
from app.sim.cameras import SceneCameras
from app.sim.robot import Robot
from app.sim.scene import Scene
from app.sim.sphere_markers import SphereMarkers
from app.specs import CameraStream


class VideoSpec(NamedTuple):
    """How the frames look (picklable, sent with each render task): the camera, the overlay's sizes and title,
    each environment's world origin (n_envs, 3) and where its status dot goes (n_envs, 3)."""

    title: str
    view: CameraView
    style: OverlayStyle
    env_origins: np.ndarray
    anchors: np.ndarray
    link_camera: CameraStream | None = None  # a named camera on a robot link: the view follows it every frame
    camera_env: int = 0  # the environment whose link carries it


class Replica(Protocol):
    """A headless scene posed from recorded states (app.episode.replica.PosedReplica is the run's)."""

    scene: Scene
    robot: Robot | None  # the robot a link camera or the collision spheres follow (None: neither is drawn)

    def pose(self, q: np.ndarray, objects: np.ndarray | None) -> np.ndarray:
        """Pose the scene at joints q (n_envs, n_dofs) and objects (n_envs, n_objects, 7); returns q as float."""

    def close(self) -> None:
        """Disconnect its PyBullet client."""


class SceneRenderer:
    """A scene posed from FrameStates and rendered with the video's overlay: the run's (app.episode.replica), or
    any other ``replica`` (its run then None: no collision spheres)."""

    def __init__(self, run: RunConfig | None, replica: Replica | None = None):
        self.replica = PosedReplica(run) if replica is None else replica
        self.scene, self.robot = self.replica.scene, self.replica.robot
        self._camera: tuple | None = None
        self._link_cameras: SceneCameras | None = None
        self._backdrops = Backdrops(self.scene)
        self.spheres = SphereMarkers(self.robot) if run is not None and run.video.show_spheres else None

    def render(self, spec: VideoSpec, state: FrameState) -> np.ndarray:
        """The picture of ``state`` with its overlay. Shape (height, width, 3) uint8."""
        q = self.replica.pose(state.q, state.objects)
        v = spec.view if spec.link_camera is None else self._link_view(spec, q[spec.camera_env])
        if self._camera is None or self._camera[0] is not v:
            self._camera = (v, Camera(self.scene.client, v.view, v.projection, v.width, v.height,
                                      self.scene.look.render_kwargs()),
                            self._backdrops.for_view(v.view, v.projection, v.width, v.height,
                                                     fixed=spec.link_camera is None))
        if self.spheres is not None:
            self.spheres.update(q)
        image = self._camera[1].frame(self._camera[2])
        notes = frame_notes(state)
        overlay = FrameOverlay(spec.title, state.t, _live_targets(state) + spec.env_origins[:, None, :],
                               quat_to_matrix(state.targets_quat), state.status, spec.anchors, int(EnvStatus.REACHED),
                               notes, None if state.marks is None else state.marks + spec.env_origins[:, None, :],
                               episodes_done(state),
                               None if state.paths is None else state.paths + spec.env_origins[:, None, :],
                               "done" if state.verdict is None else "success")
        return draw_overlay(image, v, overlay, spec.style)

    def _link_view(self, spec: VideoSpec, q: np.ndarray) -> CameraView:
        """The link camera's view at joints q (n_dofs,) of its environment, at the video's size."""
        if self._link_cameras is None or self._link_cameras.cameras[0] != spec.link_camera:
            self._link_cameras = SceneCameras(self.scene, self.robot, [spec.link_camera])
        p, R = self._link_cameras.poses(q)[spec.link_camera.name]
        return optical_view(p + spec.env_origins[spec.camera_env], R, spec.link_camera.fov, spec.view.width,
                            spec.view.height)

    def close(self) -> None:
        self.replica.close()


def optical_view(p: np.ndarray, R: np.ndarray, fov: float, width: int, height: int) -> CameraView:
    """The CameraView of an optical frame (x right, y down, z forward) at p (3,) with rotation R (3, 3), world
    frame: looking along z, the picture's up along -y (any roll, straight down included)."""
    return CameraView(p, p + R[:, 2], float(fov), int(width), int(height), tuple(-R[:, 1]))


def episodes_done(state: FrameState) -> int | None:
    """How many environments' phased episodes are done at this frame: where the task judges them, its successes
    (app.tasks), else those whose code is ``done``; None without phases (a motion driven by time)."""
    if state.verdict is not None:
        return int(np.sum(state.verdict == "success"))
    return None if state.episode is None else int(_done(state).sum())


ENDED = frozenset(("done", "hold") + REASONS)  # an expert's words for an episode it has ended


def _live_targets(state: FrameState) -> np.ndarray:
    """The targets to draw (n_envs, T, 3): NaN for an environment whose phased episode is done (its arm rests
    at the retreat pose, whose frame would hide the object it placed; its dot still says reached or not)."""
    if state.episode is None:
        return state.targets_pos
    return np.where(_done(state)[:, None, None], np.nan, state.targets_pos)


def _done(state: FrameState) -> np.ndarray:
    """Per environment whether its phased episode is done (its code is ``done``); ``state.episode`` is given."""
    return np.array([code_label(int(c)) == "done" for c in state.episode], dtype=bool)


def frame_notes(state: FrameState) -> tuple[str, ...] | None:
    """A word per environment for the overlay: the expert's phase, or once it has ended (done, holding, failed)
    the task's judgement ("success" or the reason, app.tasks); the gripper's opening; and MOTION with the limit its
    motion passed since the last frame (app.quality)."""
    flagged = state.motion is not None and any(state.motion)
    if state.episode is None and state.gripper is None and not flagged:
        return None
    n = len(state.q)
    phase = [""] * n if state.episode is None else [code_label(int(c)) for c in state.episode]
    if state.verdict is not None:  # an episode the expert ended: the task's word for it, as the report's
        phase = [str(v) if p in ENDED else p for p, v in zip(phase, state.verdict)]
    grip = [""] * n if state.gripper is None else [f"{1e3 * g:.0f}mm" for g in state.gripper]
    jerk = [""] * n if not flagged else [f"MOTION {m}" if m else "" for m in state.motion]
    return tuple(" ".join(w for w in (p, g, j) if w) for p, g, j in zip(phase, grip, jerk))


class RendererRecipe(NamedTuple):
    """How a render process makes its SceneRenderer (picklable): the run's replica, or ``replica()``'s (a
    picklable callable giving a :class:`Replica`)."""

    run: RunConfig | None
    replica: Callable[[], Replica] | None = None

    def build(self) -> SceneRenderer:
        return SceneRenderer(self.run, None if self.replica is None else self.replica())
