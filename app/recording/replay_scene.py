"""The scene a replay re-enacts an episode in: the episode's own, from the dataset's per-episode metadata
(``meta/episode_scenes.jsonl``, app.recording.episode_scenes): the recording's seed, every randomised value applied
to the config's run (app.episode.randomize.episode_run: lighting, colours, cameras, object size, mass and friction,
gripper force) and every object placed at its recorded start. Where the dataset keeps no scene (another tool's
recording, an ACT file) or keeps one the config cannot build, the replay is told so in notes that the command
prints as warnings, instead of closing the gripper on air without a word."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.config.schema import RunConfig
from app.episode.episode_scene import EpisodeScene, bodies_differ, check_bodies, object_bodies
from app.episode.randomize import episode_run
from app.errors import InputError
from app.recording.episode_scenes import FILE, read_lines
from app.sim.scene import Scene


class ReplayScene(NamedTuple):
    """run: the episode's own run (one environment); scene: its objects' starts (None: the config's own draw);
    notes: what the user must hear (no scene state kept, bodies that differ from the recorded ones)."""

    run: RunConfig
    scene: EpisodeScene | None
    notes: tuple[str, ...]


def replay_scene(root: str | Path, run: RunConfig, episode: int) -> ReplayScene:
    """Episode ``episode`` of the dataset at ``root``'s scene for ``run`` (see the module docstring). InputError
    when its line names objects the config lacks or holds draws that do not fit its scene."""
    lines = read_lines(root) if Path(root).is_dir() else {}
    objects = [o.name for o in run.scene_config.objects]
    if episode not in lines:
        why = (f"{root} keeps no scene state ({FILE}: another tool's recording?)" if not lines else
               f"{Path(root) / FILE} has no line for episode {episode}")
        notes = (f"{why}: the objects {objects} start where this config draws them, not where the episode's did, so "
                 "a grasp may close on air",) if objects else ()
        return ReplayScene(run, None, notes)
    line, where = lines[episode]
    try:
        own = episode_run(run, line)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    if line.get("seed") is not None:
        own = dataclasses.replace(own, seed=int(line["seed"]))
    scene = EpisodeScene.from_dict(line, own, where)
    notes = tuple(f"{where}: {d}; the replay builds this config's bodies"
                  for d in bodies_differ(check_bodies(line.get("bodies") or {}, where), object_bodies(own)))
    return ReplayScene(own, scene, notes)


def place_objects(scene: Scene, episode: EpisodeScene | None) -> None:
    """Environment 0's objects at the episode's starts, at rest (unchanged for None)."""
    if episode is None:
        return
    for name, obj in scene.objects.items():
        pos, quat = episode.objects[name]
        obj.set_pose(np.asarray(pos)[None], np.asarray(quat)[None], envs_idx=[0])


def recorded_ends(names: tuple[str, ...], environment_state: np.ndarray, objects: list[str]) -> dict[str, np.ndarray]:
    """Object name -> its recorded last pose (7,) from a dataset's ``observation.environment_state`` (``names``:
    ``<object>.x`` .. ``<object>.qz``), for the ``objects`` it holds; {} where it holds none."""
    if not len(environment_state):
        return {}
    column = {n: k for k, n in enumerate(names)}
    keys = ("x", "y", "z", "qw", "qx", "qy", "qz")
    return {o: environment_state[-1, [column[f"{o}.{k}"] for k in keys]] for o in objects
            if all(f"{o}.{k}" in column for k in keys)}
