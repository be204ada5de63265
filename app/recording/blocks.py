"""Episodes of a recording made in blocks of environments: each block simulated in its own PyBullet client
(app.episode.sharding.run_shard, the environments where they stand in the whole run, draws sliced from all), cut into
episodes, its cameras rendered (app.recording.episode_cameras) and, for LeRobot, each camera's frames encoded into an episode
segment right there; for ACT HDF5 each episode is written whole there (images compressed). ``python -m app.record
--workers W`` runs the blocks on Ray workers as app.sweep runs its episodes (app.runtime.work_pool.run_everywhere) and gets
back small records (file names, stats, poses), never raw frames; with one worker the one block runs in this process
and Ray is never imported."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.config.robots import robot_model
from app.config.schema import RunConfig
from app.control.status import reached
from app.dataset import EncodedVideo, EpisodeFrames, convert, write_act_episode
from app.dataset.joint_names import GRIPPER_SLOT, JOINTS_PER_ARM, arms_of, layout_names
from app.dataset.robot_map import robot_layout, values_from_dofs
from app.dataset.stats import image_stats
from app.dataset.video_segments import encode_segment
from app.episode.guided_blocks import GuidedBlocks
from app.episode.object_state import observed_poses
from app.episode.randomize import episode_runs, noisy
from app.episode.sharding import run_shard
from app.recording.episode_cameras import EpisodeCameras
from app.specs.object_spec import ObjectSpec
from app.tasks import object_task

EpisodeDone = Callable[[int, tuple[bool, str], int], None]  # (env, (success, reason), n_frames): an episode is ready


class Block(NamedTuple):
    """One block's episodes in environment order: envs (k,), episodes (SI units), outcomes (success, reason),
    poses (per episode: link camera name -> (n, 7)); files: per episode its finished ACT HDF5 file (in the
    recording's scratch folder, to be moved into place), or None (LeRobot: the writer takes the episode);
    depths: per episode, each depth camera's npz file there (app.recording.episode_cameras.DEPTH_PATH's content)."""

    envs: np.ndarray
    episodes: list[EpisodeFrames]
    outcomes: list[tuple[bool, str]]
    poses: list[dict]
    files: list[str | None]
    depths: list[dict] | tuple = ()


class Sink(NamedTuple):
    """Where a block's episodes go: ``folder`` the recording's scratch folder (on the workers' file system) or
    None; ``format`` 'lerobot' (each camera encoded into an mp4 segment there) or 'act-hdf5' (each episode written
    there whole, its images compressed: only file names travel back); ``units`` 'si' or 'trossen'; ``names`` the
    state's names."""

    folder: Path | None
    format: str = "lerobot"
    units: str = "si"
    names: tuple = ()


def outcomes(result) -> list[tuple[bool, str]]:
    """Per environment: (success, reason): a pick's own judgement, else whether the final target was reached."""
    if result.episodes:
        return [(bool(e["success"]), e.get("reason", "")) for e in result.episodes]
    tel = result.telemetry
    return [(bool(reached(tel["pos_err"][-1, e], tel["rot_err"][-1, e])), "target not reached")
            for e in range(len(result.q_final))]


def joint_names(run: RunConfig, naming: str = "kits") -> list[str]:
    """The dataset's state names for the run's robot (the Trossen layout, in ``naming``: app.dataset.joint_names)."""
    return layout_names(len(arms_of(robot_layout(list(robot_model(run.scene_config).dof_names))[0])), naming)


POSE_NAMES = ("x", "y", "z", "qw", "qx", "qy", "qz")  # an object's pose in observation.environment_state
PLACE_NAMES = ("place_target.x", "place_target.y")  # an object task's place target, after the objects' poses


def environment_names(run: RunConfig) -> list[str]:
    """The names of ``observation.environment_state``: each object's pose, ``<object>.x`` .. ``<object>.qz``
    (position [m], quaternion wxyz, in its environment's frame), then an object task's place target
    (``place_target.x``, ``place_target.y`` [m]: what the task's success is judged against, so a policy can see
    it); [] for a scene without objects."""
    if not run.scene_config.objects:
        return []
    place = list(PLACE_NAMES) if object_task(run.motion) else []
    return [f"{o.name}.{k}" for o in run.scene_config.objects for k in POSE_NAMES] + place


def environment_state(frames: list, env: int, objects: Sequence[ObjectSpec]) -> np.ndarray | None:
    """Environment ``env``'s objects' poses at each frame (``objects``: their specs, in the scene's order: each
    orientation modulo its symmetry, as app.envs observes it: app.episode.object_state), then its place target
    where the frames mark one (n_frames, 7 n_objects [+ 2]); None without objects."""
    if not frames or frames[0].objects is None:
        return None
    poses = observed_poses(np.stack([f.objects[env] for f in frames]), objects).reshape(len(frames), -1)
    rows = [poses[k] if f.marks is None else np.concatenate([poses[k], f.marks[env, 0, :2]])
            for k, f in enumerate(frames)]
    return np.stack(rows)


def record_block(item: tuple, on_episode: EpisodeDone | None = None) -> Block:
    """Item (run, envs, Sink): simulate the block, cut its episodes, render them and hand them to the sink (see
    :class:`Sink`); ``on_episode`` (in this process: the simulation's steps shown too) as each episode is ready.
    Module-level: it travels to Ray workers."""
    run, envs, sink = item
    envs = np.asarray(envs, dtype=int)
    own_runs = episode_runs(run, envs)  # randomised scenes: each environment its own run (app.episode.randomize)
    if own_runs is not None:
        return joined([record_block((own, e, sink), on_episode) for own, e in own_runs])
    shard = run_shard(run, envs, record_video=True, show_progress=on_episode is not None)
    judged = outcomes(shard.result)
    names, dof_map = robot_layout(list(robot_model(run.scene_config).dof_names))
    q = np.stack([f.q for f in shard.frames], axis=1)  # (k, n_frames, n_dofs)
    cameras = EpisodeCameras(run) if run.scene_config.cameras else None
    cut = []
    try:
        for i in range(len(envs)):
            state = values_from_dofs(q[i], dof_map, len(names))
            cut.append(_episode(run, sink, shard.frames, i, int(envs[i]), state, names, cameras))
            if on_episode is not None:
                on_episode(int(envs[i]), judged[i], len(state))
    finally:
        if cameras is not None:
            cameras.close()
    return Block(envs, [c[0] for c in cut], judged, [c[1] for c in cut], [c[2] for c in cut], [c[3] for c in cut])


def _episode(run: RunConfig, sink: Sink, frames: list, i: int, env: int, state: np.ndarray, names: list[str],
             cameras: EpisodeCameras | None) -> tuple[EpisodeFrames, dict, str | None, dict]:
    """Block row ``i`` (environment ``env``) as an episode: (its frames, its link cameras' poses, its ACT file or
    None, its depth files: camera -> npz in the sink's folder)."""
    depth: dict = {}
    images, pose = cameras.render(frames, i, run.video.fps, depth) if cameras else ({}, {})
    noisy_state, action = noisy(run, env, state, actions(run, state, frames, i, names))
    objects = environment_state(frames, i, run.scene_config.objects)
    episode = EpisodeFrames(run.motion.type, noisy_state, action, images, objects)
    file, folder = None, Path(sink.folder) if sink.folder is not None else None
    if folder is not None and sink.format == "act-hdf5":
        file = str(act_file(folder / f"env-{env:06d}.hdf5", episode, run.video.fps, sink))
        episode = episode._replace(images={})
    elif folder is not None:
        episode = episode._replace(images={key: _encoded(folder, v, run.video.fps) for key, v in images.items()})
    return episode, pose, file, {name: depth_file(folder, env, name, v) for name, v in depth.items()}


def depth_file(folder: Path, env: int, camera: str, depth: np.ndarray) -> str:
    """A depth camera's episode (n, h, w) uint16 [mm] as ``depth_mm`` in an npz file in ``folder``; its path."""
    path = folder / f"depth-env-{env:06d}-{camera}.npz"
    folder.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, depth_mm=depth)
    return str(path)


def joined(blocks: list[Block]) -> Block:
    """Blocks of consecutive environments as one."""
    return Block(np.concatenate([b.envs for b in blocks]), [e for b in blocks for e in b.episodes],
                 [o for b in blocks for o in b.outcomes], [p for b in blocks for p in b.poses],
                 [f for b in blocks for f in b.files], [d for b in blocks for d in b.depths])


def actions(run: RunConfig, state: np.ndarray, frames: list, env: int, names: list[str]) -> np.ndarray:
    """An episode's action rows (n, n_values): the joints one frame later (where the controller drove them; the
    last frame repeats), each gripper's value the finger position it was commanded to then (a grip commands the
    fingers closed past the object it holds, as a leader arm does; the state shows where they stopped)."""
    action = np.vstack([state[1:], state[-1:]])
    goals = [f.finger_goals for f in frames]
    if any(g is None for g in goals) or not len(goals):
        return action
    goals = np.stack([g[env] for g in goals])  # (n, n_grippers)
    goals = np.vstack([goals[1:], goals[-1:]])
    cfg = run.scene_config
    keys = list(cfg.robot.grippers_by_arm)
    arms = arms_of(names)
    for a, arm in enumerate(arms):
        key = keys[0] if len(arms) == 1 else arm
        if key in keys:
            action[:, a * JOINTS_PER_ARM + GRIPPER_SLOT] = goals[:, keys.index(key)]
    return action


def act_file(path: Path, episode: EpisodeFrames, fps: float, sink: Sink) -> Path:
    """The episode as an ACT HDF5 file at ``path`` in the sink's units: qvel the state's rate of change, each
    camera's frames under its name (``observation.images.cam_high`` -> ``cam_high``)."""
    state, action = convert(episode.state, "si", sink.units), convert(episode.action, "si", sink.units)
    images = {key.rsplit(".", 1)[-1]: v for key, v in episode.images.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_act_episode(path, state, np.gradient(state, axis=0) * fps, action, images, fps, list(sink.names))


def _encoded(folder: Path, frames: np.ndarray, fps: int) -> EncodedVideo:
    n, h, w = frames.shape[:3]
    return EncodedVideo(str(encode_segment(folder, frames, fps)), n, h, w, image_stats(frames))


def block_plan(run: RunConfig, n: int, workers: int, sink: Sink) -> list | GuidedBlocks:
    """The items (run, envs, sink) of the blocks on ``workers`` workers. With cameras an episode's pictures cost far
    more than its share of a batched simulation: one episode a block, so that each is reported (and its ETA
    updated) as it is ready rather than a worker's whole share at the end; else blocks cut as the workers go
    (app.episode.guided_blocks)."""
    if run.scene_config.cameras:
        return [(run, np.array([e]), sink) for e in range(n)]
    return GuidedBlocks(n, workers, lambda envs: (run, envs, sink))


def record_blocks(run: RunConfig, workers: int, address: str | None, sink: Sink,
                  on_episode: EpisodeDone | None = None) -> list[Block]:
    """Every environment of ``run`` in blocks, in environment order: one block here (workers 1; ``on_episode`` as
    each episode is ready) or blocks over ``workers`` Ray workers (cut as they go, app.episode.guided_blocks; with
    cameras one episode a block; app.runtime.work_pool.run_everywhere; ``on_episode`` for each of a block's episodes as the
    block comes back)."""
    n = run.n_envs or 1
    if workers <= 1:
        return [record_block((run, np.arange(n), sink), on_episode)]
    from app.runtime.work_pool import run_everywhere

    def block_done(_: int, block: Block) -> None:
        for env, outcome, episode in zip(block.envs, block.outcomes, block.episodes):
            on_episode(int(env), outcome, len(episode.state))

    found, _ = run_everywhere(block_plan(run, n, workers, sink), record_block, workers, address,
                              on_result=block_done if on_episode else None)
    return sorted(found, key=lambda b: int(b.envs[0]))
