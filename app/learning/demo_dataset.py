"""The demonstrations of app.learning.demos as a LeRobot v3.0 dataset (app.dataset.LeRobotWriter, the writer
``app.record`` uses), holding exactly what the policy will observe: ``observation.state`` always,
``observation.environment_state`` (the objects' poses and the place target) for the ``state`` observation,
``observation.images.<camera>`` for the pixel ones (then no object pose: the pictures must tell). Each episode's
scene goes to ``meta/episode_scenes.jsonl`` (its seed, starts and place target), so ``app.eval --replay`` plays
it again. The frame rate is the environment's step rate."""

from __future__ import annotations

import json
from pathlib import Path

from app.config.schema import RunConfig
from app.dataset import ROBOT_TYPES, CameraSpec, DatasetSpec, EpisodeFrames, LeRobotWriter
from app.dataset.joint_names import arms_of
from app.episode.episode_scene import object_bodies
from app.learning.demos import Demo
from app.recording.blocks import environment_names, joint_names
from app.recording.episode_cameras import KEY_PREFIX
from app.recording.episode_scenes import FILE as SCENES_FILE

EE_NAMES = ("ee.x", "ee.y", "ee.z", "ee.qw", "ee.qx", "ee.qy", "ee.qz", "gripper")  # an ee_pose action, per arm


def action_names(run: RunConfig, action_mode: str) -> tuple[str, ...]:
    """The action's names: the state's joints (``joint``), or per arm the end effector's position [m] and
    quaternion (w, x, y, z) in the environment frame and the finger position [m] (``ee_pose``), prefixed with the
    arm (``main_``, ``left_``, ``right_``)."""
    names = tuple(joint_names(run))
    if action_mode == "joint":
        return names
    return tuple(f"{arm}_{n}" for arm in arms_of(list(names)) for n in EE_NAMES)


def demo_spec(run: RunConfig, fps: int, obs_type: str, cameras: list, action_mode: str = "joint") -> DatasetSpec:
    """The dataset's features for ``obs_type`` (app.envs.options) with the observed ``cameras`` (CameraStreams at
    the size they render) and actions of ``action_mode`` (``joint`` or ``ee_pose``)."""
    names = tuple(joint_names(run))
    env_names = tuple(environment_names(run)) if obs_type in ("state", "pixels_state") else ()
    streams = tuple(CameraSpec(KEY_PREFIX + c.name, c.height, c.width) for c in cameras) \
        if obs_type.startswith("pixels") else ()
    return DatasetSpec(fps, ROBOT_TYPES[len(names) // 7], names, action_names(run, action_mode), streams, env_names)


class DemoWriter:
    """Appends Demos to the dataset at ``root`` (new or one this writer began) and their scenes beside it."""

    def __init__(self, root: Path, run: RunConfig, spec: DatasetSpec):
        self.root, self.run, self.spec = Path(root), run, spec
        self.writer = LeRobotWriter(self.root, spec)
        self.task = run.motion.type

    @property
    def n_episodes(self) -> int:
        return self.writer.n_episodes

    def append(self, demo: Demo) -> int:
        """Writes one demonstration; returns its episode index."""
        images = {KEY_PREFIX + name: frames for name, frames in demo.images.items()}
        env_state = demo.environment_state if self.spec.environment_names else None
        index = self.writer.append(EpisodeFrames(self.task, demo.state, demo.action, images, env_state))
        line = {"episode_index": int(index), "env": 0, "n_envs": 1, "reset_seed": int(demo.seed),
                **demo.scene.as_dict(),
                "bodies": object_bodies(self.run)}
        path = self.root / SCENES_FILE
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
        return index
