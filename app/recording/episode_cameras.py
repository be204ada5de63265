"""The camera streams of a recording: each episode's pictures from every named camera of the scene (``cameras:``),
rendered after the simulation from the recorded states (joints and object poses per frame) in a one-environment
copy of the scene, so that rendering stays out of the control loop and every episode sees only its own
environment. A camera slower than the dataset's rate holds its latest picture; a faster one is sampled.

A camera with ``depth: true`` (or every camera, ``app.record --depth``) also records its depth along the optical
axis, uint16 millimetres (0: nothing within its far plane), one ``depth/<camera>/episode_NNNNNN.npz`` per episode
beside the dataset (array ``depth_mm``, (frames, height, width)): LeRobot v3.0 has no lossless 16-bit video.

What the cameras are is recorded beside the data: ``meta/cameras.json`` (per camera its dataset key, size, rate,
the pinhole matrix K, the optical-frame convention, and its mount: the fixed pose, or the link and the offset)
and, for cameras on a link, ``meta/camera_poses.parquet``: the optical frame's pose in the environment frame at
every frame of every episode (``episode_index``, ``frame_index``, ``<camera>.pos`` (3), ``<camera>.quat_wxyz`` (4)).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from app.config.schema import RunConfig
from app.dataset import CameraSpec
from app.dataset.files import read_parquet, write_parquet
from app.episode.frame_state import FrameState
from app.episode.replica import PosedReplica
from app.errors import ConfigError, DatasetError
from app.kinematics.rotations import matrix_to_quat
from app.runtime.outputs import write_atomic
from app.sim.cameras import SceneCameras, intrinsics

KEY_PREFIX = "observation.images."
MAX_EPISODE_GB = 8.0  # one episode's pictures of every camera are held in memory until encoded


def check_memory(run: RunConfig) -> None:
    """One episode's pictures (every camera, one per dataset row: ``video.fps`` x the duration) fit in
    MAX_EPISODE_GB; checked before the simulation. Raises ConfigError naming the cameras."""
    cams = camera_streams(run)
    frames = math.ceil(run.duration * run.video.fps) + 1
    gigabytes = frames * sum(c.width * c.height * 3 for c in cams) / 1e9
    if gigabytes > MAX_EPISODE_GB:
        sizes = ", ".join(f"{c.name} {c.width}x{c.height}" for c in cams)
        raise ConfigError(f"cameras: {frames} rows ({run.duration:g} s at video.fps {run.video.fps}) of {sizes} would "
                          f"hold {gigabytes:.1f} GB of pictures per episode (limit {MAX_EPISODE_GB:g} GB); lower "
                          "video.fps, the cameras' sizes or the duration")


def camera_streams(run: RunConfig) -> list:
    """The scene's named cameras (``cameras:``)."""
    return list(run.scene_config.cameras)


def dataset_cameras(run: RunConfig) -> tuple[CameraSpec, ...]:
    """The dataset's video features, one per named camera, in the scene's order."""
    return tuple(CameraSpec(KEY_PREFIX + c.name, c.height, c.width) for c in run.scene_config.cameras)


def cameras_json(run: RunConfig) -> dict:
    """What ``meta/cameras.json`` holds (see the module docstring)."""
    out = {}
    for c in camera_streams(run):
        mount = ({"type": "fixed", "eye": list(c.eye), "target": list(c.target), "up": list(c.up)} if c.link is None
                 else {"type": "link", "link": c.link, "offset_pos": list(c.offset_pos),
                       "offset_quat_wxyz": list(c.offset_quat), "poses": "meta/camera_poses.parquet"})
        out[c.name] = {"key": KEY_PREFIX + c.name, "width": c.width, "height": c.height, "fps": c.fps,
                       "fov_vertical_deg": c.fov, "K": intrinsics(c).tolist(), "distortion": None,
                       "near_m": c.near, "far_m": c.far, "frame": "optical: x right, y down, z forward; environment "
                       "frame of the episode", "renderer": "pybullet TinyRenderer", "mount": mount}
        if c.depth:
            out[c.name]["depth"] = {"path": DEPTH_PATH.replace("{camera}", c.name), "array": "depth_mm",
                                    "dtype": "uint16", "unit": "mm", "shape": "(frames, height, width)",
                                    "meaning": "depth along the optical axis (z); 0: nothing within far_m"}
    return out


DEPTH_PATH = "depth/{camera}/episode_{episode_index:06d}.npz"  # beside the dataset: array "depth_mm", (n, h, w)
DEPTH_MAX_MM = 65535  # uint16's largest: depth beyond it (or nothing within far) is stored as 0


def depth_mm(depth_m: np.ndarray) -> np.ndarray:
    """Depth along the optical axis [m] (float, ``inf`` for nothing) as uint16 millimetres, rounded; 0 where
    nothing lies within the camera's far plane or beyond 65.535 m."""
    mm = np.round(np.asarray(depth_m, dtype=np.float64) * 1000.0)
    return np.where(np.isfinite(mm) & (mm <= DEPTH_MAX_MM), mm, 0).astype(np.uint16)


class EpisodeCameras:
    """Renders episodes' camera streams from their recorded FrameStates (one environment of the run)."""

    def __init__(self, run: RunConfig):
        self.streams = camera_streams(run)
        self.replica = PosedReplica(run, n_envs=1)
        self.scene, self.robot = self.replica.scene, self.replica.robot
        self.cameras = SceneCameras(self.scene, self.robot, self.streams, backdrops=True)
        self.link_cameras = [c.name for c in self.streams if c.link is not None]

    def render(self, frames: list[FrameState], env: int, fps: float, depth: dict | None = None) -> tuple[dict, dict]:
        """Environment ``env``'s pictures at the dataset's ``fps``: (key -> (n, h, w, 3) uint8, name -> poses
        (n, 7): position and quat wxyz of each link camera's optical frame); ``depth``, where given, receives
        each depth camera's name -> (n, h, w) uint16 depth [mm] (see :func:`depth_mm`)."""
        n = len(frames)
        images = {c.name: np.empty((n, c.height, c.width, 3), np.uint8) for c in self.streams}
        depths = {c.name: np.zeros((n, c.height, c.width), np.uint16) for c in self.streams if c.depth}
        poses = {name: np.empty((n, 7)) for name in self.link_cameras}
        shown = {c.name: -1 for c in self.streams}
        for k, state in enumerate(frames):
            q = self.replica.pose(state.q[env:env + 1], None if state.objects is None else state.objects[env:env + 1],
                                  None if state.marks is None else state.marks[env:env + 1, 0, :2])[0]
            at = self.cameras.poses(q)
            for name in self.link_cameras:
                poses[name][k] = np.concatenate([at[name][0], matrix_to_quat(at[name][1])])
            due = [c.name for c in self.streams if int(np.floor(k / fps * c.fps + 1e-9)) != shown[c.name]]
            seen: dict = {}
            for name, image in self.cameras.render(at, 0, due, seen).items():
                images[name][k] = image
                if name in depths:
                    depths[name][k] = depth_mm(seen[name])
                shown[name] = int(np.floor(k / fps * next(c.fps for c in self.streams if c.name == name) + 1e-9))
            for c in self.streams:
                if c.name not in due:
                    images[c.name][k] = images[c.name][k - 1]
                    if c.name in depths:
                        depths[c.name][k] = depths[c.name][k - 1]
        if depth is not None:
            depth.update(depths)
        return {KEY_PREFIX + name: v for name, v in images.items()}, poses

    def close(self) -> None:
        self.scene.close()


class CameraMeta:
    """Writes ``meta/cameras.json`` (when the dataset has none yet) and ``meta/camera_poses.parquet`` before
    every episode is counted (atomically), after the rows of the ``first`` episodes a continued dataset holds
    (rows of episodes past its count are leftovers of an interrupted recording: dropped)."""

    def __init__(self, root: Path, run: RunConfig, first: int = 0):
        self.root, self._tables = Path(root), []
        meta = self.root / "meta"
        meta.mkdir(parents=True, exist_ok=True)
        if not (meta / "cameras.json").exists():  # a continued dataset's equals this run's (app.recording.out_folder)
            text = json.dumps(cameras_json(run), indent=4)
            write_atomic(meta / "cameras.json", ".json", lambda tmp: Path(tmp).write_text(text))
        path = meta / "camera_poses.parquet"
        if first > 0 and path.exists():
            table = read_parquet(path)
            keep = pc.less(table.column("episode_index"), first)
            self._tables.append(table.filter(keep).replace_schema_metadata(None))

    def add(self, episode_index: int, poses: dict[str, np.ndarray]) -> None:
        if not poses:
            return
        n = len(next(iter(poses.values())))
        columns = {"episode_index": pa.array(np.full(n, episode_index, np.int64)),
                   "frame_index": pa.array(np.arange(n, dtype=np.int64))}
        for name, p in poses.items():
            columns[f"{name}.pos"] = pa.array(list(p[:, :3]), type=pa.list_(pa.float64(), 3))
            columns[f"{name}.quat_wxyz"] = pa.array(list(p[:, 3:]), type=pa.list_(pa.float64(), 4))
        table = pa.table(columns)
        if self._tables and self._tables[0].schema != table.schema:
            raise DatasetError(f"holds columns {self._tables[0].column_names}; this recording's are "
                               f"{table.column_names}", str(self.root / "meta" / "camera_poses.parquet"))
        self._tables.append(table)
        write_parquet(self.root / "meta" / "camera_poses.parquet", self._tables)
