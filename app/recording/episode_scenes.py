"""Each recorded episode's scene beside the data: ``meta/episode_scenes.jsonl``, one JSON line per episode
appended as the episode is written (``episode_index``, the run's ``seed``, the environment ``env`` of ``n_envs``
it was drawn for, every object's start pose and the place target: app.episode.episode_scene.EpisodeScene; with a
``randomization:``, the episode's drawn values: app.episode.randomize), so a
replay or an evaluation starts each episode where it started. Lines are only ever appended (a continued
recording adds its own; for an index written twice, the last line counts)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.config.schema import RunConfig
from app.episode.episode_scene import EpisodeScene, run_scenes
from app.episode.randomize import scene_record
from app.errors import DatasetError

FILE = Path("meta") / "episode_scenes.jsonl"


class SceneLog:
    """Appends the scenes of a recording of ``run`` (its ``n_envs`` environments) into the dataset at ``root``."""

    def __init__(self, root: Path, run: RunConfig):
        self.path = Path(root) / FILE
        self.run = run
        self.scenes = run_scenes(run, run.n_envs or 1)

    def add(self, episode_index: int, env: int) -> None:
        """Episode ``episode_index`` of the dataset is environment ``env`` of the run."""
        line = {"episode_index": int(episode_index), "env": int(env), "n_envs": self.run.n_envs or 1,
                **scene_record(self.run, env, self.scenes)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(json.dumps(line) + "\n")
            f.flush()
            os.fsync(f.fileno())


def read_lines(root: str | Path) -> dict[int, tuple[dict, str]]:
    """episode_index -> (its line of a dataset's ``meta/episode_scenes.jsonl`` as JSON, 'FILE line K'); {} where
    there is none (another tool's recording, or ``root`` is not a folder); DatasetError naming the file and
    line for a line that is not a JSON object with an episode_index."""
    path = Path(root) / FILE
    if not path.is_file():
        return {}
    out = {}
    for k, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
            index = int(data["episode_index"])
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"line {k} is not an episode scene (JSON with episode_index): {exc}", str(path)) from None
        out[index] = (data, f"{path} line {k}")
    return out


def read_scenes(root: str | Path, run: RunConfig) -> dict[int, EpisodeScene]:
    """episode_index -> EpisodeScene of a dataset's ``meta/episode_scenes.jsonl`` ({} where there is none: another
    tool's recording); DatasetError naming the file and line for a line that is not a scene of ``run``."""
    return {index: EpisodeScene.from_dict(data, run, where) for index, (data, where) in read_lines(root).items()}
