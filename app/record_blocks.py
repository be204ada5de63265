"""Episodes of a recording made in blocks of environments: each block simulated in its own PyBullet client
(app.scale.run_shard, the environments where they stand in the whole run, draws sliced from all), cut into
episodes, its cameras rendered (app.record_cameras) and, for LeRobot, each camera's frames encoded into an episode
segment right there. ``python -m app.record --workers W`` runs the blocks on Ray workers as app.sweep runs its
episodes (app.scale.run_everywhere) and gets back small records (segment files, stats, poses); with one worker the
one block runs in this process and Ray is never imported."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.config.robots import robot_model
from app.config.schema import RunConfig
from app.control.status import reached
from app.dataset import EncodedVideo, EpisodeFrames
from app.dataset.robot_map import robot_layout, values_from_dofs
from app.dataset.stats import image_stats
from app.dataset.video import encode_segment
from app.record_cameras import EpisodeCameras
from app.scale import run_shard


class Block(NamedTuple):
    """One block's episodes in environment order: envs (k,), episodes (SI units), outcomes (success, reason),
    poses (per episode: link camera name -> (n, 7))."""

    envs: np.ndarray
    episodes: list[EpisodeFrames]
    outcomes: list[tuple[bool, str]]
    poses: list[dict]


def outcomes(result) -> list[tuple[bool, str]]:
    """Per environment: (success, reason): a pick's own judgement, else whether the final target was reached."""
    if result.episodes:
        return [(bool(e["success"]), e.get("reason", "")) for e in result.episodes]
    tel = result.telemetry
    return [(bool(reached(tel["pos_err"][-1, e], tel["rot_err"][-1, e])), "target not reached")
            for e in range(len(result.q_final))]


def joint_names(run: RunConfig) -> list[str]:
    """The dataset's state names for the run's robot (the Trossen layout)."""
    return robot_layout(list(robot_model(run.scene_config).dof_names))[0]


def record_block(item: tuple) -> Block:
    """Item (run, envs, segments folder or None): simulate the block, cut its episodes, render and, with a
    segments folder, encode its cameras. Module-level: it travels to Ray workers."""
    run, envs, segments = item
    envs = np.asarray(envs, dtype=int)
    shard = run_shard(run, envs, record_video=True)
    names, dof_map = robot_layout(list(robot_model(run.scene_config).dof_names))
    q = np.stack([f.q for f in shard.frames], axis=1)  # (k, n_frames, n_dofs)
    cameras = EpisodeCameras(run) if run.scene_config.cameras else None
    episodes, poses = [], []
    try:
        for i in range(len(envs)):
            state = values_from_dofs(q[i], dof_map, len(names))
            images, pose = cameras.render(shard.frames, i, run.video.fps) if cameras else ({}, {})
            if segments is not None:
                images = {key: _encoded(Path(segments), frames, run.video.fps) for key, frames in images.items()}
            episodes.append(EpisodeFrames(run.task.type, state, np.vstack([state[1:], state[-1:]]), images))
            poses.append(pose)
    finally:
        if cameras is not None:
            cameras.close()
    return Block(envs, episodes, outcomes(shard.result), poses)


def _encoded(folder: Path, frames: np.ndarray, fps: int) -> EncodedVideo:
    n, h, w = frames.shape[:3]
    return EncodedVideo(str(encode_segment(folder, frames, fps)), n, h, w, image_stats(frames))


def record_blocks(run: RunConfig, workers: int, address: str | None, segments: Path | None) -> list[Block]:
    """Every environment of ``run`` in blocks, in environment order: one block here (workers 1) or blocks over
    ``workers`` Ray workers (app.scale.blocks, app.scale.run_everywhere)."""
    n = run.n_envs or 1
    if workers <= 1:
        return [record_block((run, np.arange(n), segments))]
    from app.scale import blocks, run_everywhere

    items = [(run, envs, segments) for envs in blocks(n, workers)]
    found, _ = run_everywhere(items, record_block, workers, address)
    return sorted(found, key=lambda b: int(b.envs[0]))
