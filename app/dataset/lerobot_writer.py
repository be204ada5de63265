"""Write a LeRobot v3.0 dataset one finished episode at a time.

Layout (one chunk, one file per kind): ``data/chunk-000/file-000.parquet`` (every frame, one row group per
episode), ``videos/<camera key>/chunk-000/file-000.mp4`` (every episode of that camera, one after another),
``meta/episodes/chunk-000/file-000.parquet`` (one row per episode), ``meta/tasks.parquet``,
``meta/stats.json`` and ``meta/info.json``.

Each append rewrites these files atomically in the order videos, data, tasks, episodes, stats, info.
``info.json``'s totals are the commit record: lerobot's length and our reader take the episode count from
it, and every file it points at already holds the episodes it counts, so a recording stopped anywhere
(SIGINT, a crash, a full disk) leaves a dataset that loads with the episodes finished before. A writer opened
again on that folder drops the unfinished episode's leftovers and appends after the last counted one.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import app.dataset.v30_schema as v30
import app.dataset.video as video
from app.dataset.files import hf_features_metadata, pandas_index_metadata, write_json, write_parquet
from app.dataset.records import DatasetSpec, EncodedVideo, EpisodeFrames
from app.dataset.stats import STAT_KEYS, aggregate, image_stats, to_json, vector_stats
from app.errors import DatasetError

log = logging.getLogger(__name__)


class LeRobotWriter:
    """Appends episodes to the LeRobot v3.0 dataset at ``root`` (created, or continued where it stopped).

    Args:
        root: The dataset's folder.
        spec: What every episode holds; must equal the recorded one when ``root`` already holds a dataset.
    """

    def __init__(self, root: str | Path, spec: DatasetSpec):
        self.root = Path(root)
        self.spec = spec
        self._features = v30.features(spec)
        self._tasks: list[str] = []
        self._episodes: list[dict] = []  # rows of meta/episodes, stats included
        self._data: list[pa.Table] = []  # one table per episode
        if (self.root / v30.INFO_PATH).exists():
            self._resume()

    @property
    def n_episodes(self) -> int:
        return len(self._episodes)

    @property
    def n_frames(self) -> int:
        return self._episodes[-1]["dataset_to_index"] if self._episodes else 0

    def append(self, episode: EpisodeFrames) -> int:
        """Add a finished episode; returns its index. Nothing is counted until every file holds it.

        Raises:
            DatasetError: shapes that do not fit the spec, non-finite values, a camera missing.
        """
        n = self._check(episode)
        index = self.n_episodes
        if episode.task not in self._tasks:
            self._tasks.append(episode.task)
        row = {"episode_index": index, "tasks": [episode.task], "length": n, "data/chunk_index": 0,
               "data/file_index": 0, "dataset_from_index": self.n_frames, "dataset_to_index": self.n_frames + n}
        for cam in self.spec.cameras:
            row.update(self._append_video(cam.key, episode.images[cam.key]))
        table = self._data_table(episode, index, self._tasks.index(episode.task))
        stats = {"observation.state": vector_stats(np.asarray(episode.state, dtype=np.float32)),
                 "action": vector_stats(np.asarray(episode.action, dtype=np.float32))}
        stats.update({name: vector_stats(table.column(name).to_numpy()) for name in v30.INDEX_COLUMNS})
        stats.update({cam.key: _image_stats(episode.images[cam.key]) for cam in self.spec.cameras})
        for name in self._features:
            row.update({f"stats/{name}/{k}": np.asarray(v).tolist() for k, v in stats[name].items()})
        row.update({"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0})
        self._commit(table, row)
        log.info("episode %d: %d frames written to %s", index, n, self.root)
        return index

    def _check(self, episode: EpisodeFrames) -> int:
        state, action = np.asarray(episode.state), np.asarray(episode.action)
        n = len(state)
        want = {"state": (state, len(self.spec.state_names)), "action": (action, len(self.spec.action_names))}
        for what, (values, width) in want.items():
            if values.ndim != 2 or values.shape != (n, width) or n == 0:
                raise DatasetError(f"episode {what} has shape {values.shape}; expected (n_frames >= 1, {width}) "
                                   f"with as many frames as the state ({n})", str(self.root))
            if not np.isfinite(values).all():
                raise DatasetError(f"episode {what} holds NaN or inf values", str(self.root))
        for cam in self.spec.cameras:
            frames = episode.images.get(cam.key)
            expected = (n, cam.height, cam.width, 3)
            if isinstance(frames, EncodedVideo):
                if (frames.n_frames, frames.height, frames.width) != expected[:3]:
                    raise DatasetError(f"camera {cam.key!r} got an encoded {frames.n_frames} x {frames.height} x "
                                       f"{frames.width}; expected {expected[:3]}", str(self.root))
                continue
            if frames is None or frames.shape != expected or frames.dtype != np.uint8:
                got = "nothing" if frames is None else f"{frames.shape} {frames.dtype}"
                raise DatasetError(f"camera {cam.key!r} got {got}; expected {expected} uint8", str(self.root))
        return n

    def _append_video(self, key: str, frames: np.ndarray | EncodedVideo) -> dict:
        start = self._episodes[-1][f"videos/{key}/to_timestamp"] if self._episodes else 0.0
        path = self.root / v30.VIDEO_PATH.format(video_key=key, chunk_index=0, file_index=0)
        if isinstance(frames, EncodedVideo):
            added = video.append_segment(path, Path(frames.path))
        else:
            added = video.append_frames(path, frames, self.spec.fps)
        return {f"videos/{key}/chunk_index": 0, f"videos/{key}/file_index": 0,
                f"videos/{key}/from_timestamp": start, f"videos/{key}/to_timestamp": start + added / self.spec.fps}

    def _data_table(self, episode: EpisodeFrames, index: int, task_index: int) -> pa.Table:
        n = len(episode.state)
        frame_index = np.arange(n, dtype=np.int64)
        columns = {"observation.state": np.asarray(episode.state, dtype=np.float32),
                   "action": np.asarray(episode.action, dtype=np.float32),
                   "timestamp": (frame_index / self.spec.fps).astype(np.float32), "frame_index": frame_index,
                   "episode_index": np.full(n, index, dtype=np.int64),
                   "index": self.n_frames + frame_index, "task_index": np.full(n, task_index, dtype=np.int64)}
        schema = v30.data_schema(self.spec)
        arrays = [pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), v.shape[1]) if v.ndim == 2
                  else pa.array(v) for v in columns.values()]
        meta = hf_features_metadata({f.name: ("float32" if "float" in str(f.type) else "int64",
                                              getattr(f.type, "list_size", None)) for f in schema})
        return pa.Table.from_arrays(arrays, schema=schema.with_metadata(meta))

    def _commit(self, table: pa.Table, row: dict) -> None:
        """Write data, tasks, episodes, stats, then info (the commit record); keep the new state only after."""
        data, episodes = self._data + [table], self._episodes + [row]
        write_parquet(self.root / v30.DATA_PATH.format(chunk_index=0, file_index=0), data)
        tasks = pa.table({"task_index": pa.array(range(len(self._tasks)), pa.int64()),
                          v30.TASK_INDEX_COLUMN: pa.array(self._tasks, pa.large_string())})
        tasks = tasks.replace_schema_metadata(pandas_index_metadata(v30.TASK_INDEX_COLUMN, {"task_index": "int64"}))
        write_parquet(self.root / v30.TASKS_PATH, [tasks])
        schema = v30.episodes_schema(self.spec)
        write_parquet(self.root / v30.EPISODES_PATH.format(chunk_index=0, file_index=0),
                      [pa.Table.from_pylist(episodes, schema=schema)])
        stats = {name: aggregate([{k: np.asarray(e[f"stats/{name}/{k}"]) for k in STAT_KEYS} for e in episodes])
                 for name in self._features}
        write_json(self.root / v30.STATS_PATH, to_json(stats))
        total_frames = episodes[-1]["dataset_to_index"]
        write_json(self.root / v30.INFO_PATH, v30.info(self.spec, len(episodes), total_frames, len(self._tasks)))
        self._data, self._episodes = data, episodes

    def _resume(self) -> None:
        """Load the counted episodes of an existing dataset; cut what an interrupted append left behind."""
        info = json.loads((self.root / v30.INFO_PATH).read_text())
        if info.get("codebase_version") != v30.VERSION or info.get("features") != json.loads(
                json.dumps(self._features)) or info.get("fps") != self.spec.fps:
            raise DatasetError("holds a dataset of other features, fps or version; write to a new folder",
                               str(self.root))
        n_episodes, n_frames = info["total_episodes"], info["total_frames"]
        rows = pq.read_table(self.root / v30.EPISODES_PATH.format(chunk_index=0, file_index=0)).to_pylist()
        self._episodes = rows[:n_episodes]
        self._tasks = pq.read_table(self.root / v30.TASKS_PATH).column(v30.TASK_INDEX_COLUMN).to_pylist()
        data = pq.read_table(self.root / v30.DATA_PATH.format(chunk_index=0, file_index=0))
        self._data = [data.slice(r["dataset_from_index"], r["length"]) for r in self._episodes]
        for cam in self.spec.cameras:
            path = self.root / v30.VIDEO_PATH.format(video_key=cam.key, chunk_index=0, file_index=0)
            end = self._episodes[-1][f"videos/{cam.key}/to_timestamp"] if self._episodes else 0.0
            video.truncate(path, int(round(end * self.spec.fps)))
        log.info("continuing %s after %d episodes (%d frames)", self.root, n_episodes, n_frames)


def _image_stats(frames: np.ndarray | EncodedVideo) -> dict:
    return frames.stats if isinstance(frames, EncodedVideo) else image_stats(frames)
