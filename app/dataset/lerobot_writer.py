"""Write a LeRobot v3.0 dataset one finished episode at a time.

Layout: ``data/chunk-NNN/file-NNN.parquet`` (the frames, one row group per episode),
``videos/<camera key>/chunk-NNN/file-NNN.mp4`` (episodes of that camera one after another),
``meta/episodes/chunk-NNN/file-NNN.parquet`` (one row per episode, pointing at its data and video files),
``meta/tasks.parquet``, ``meta/stats.json`` and ``meta/info.json``. Files roll over to the next file (and, after
``chunks_size`` files, the next chunk) by size as lerobot's do (app.dataset.rollover; the limits are info.json's).

Each append rewrites the files it touches atomically in the order videos, data, tasks, episodes, stats, info.
``info.json``'s totals are the commit record: lerobot's length and our reader take the episode count from
it, and every file it points at already holds the episodes it counts, so a recording stopped anywhere
(SIGINT, a crash, a full disk) leaves a dataset that loads with the episodes finished before. A writer opened
again on that folder drops the unfinished episode's leftovers and appends after the last counted one.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import app.dataset.v30_schema as v30
import app.dataset.video_segments as video
from app.dataset.continuation import check_lerobot
from app.dataset.files import hf_features_metadata, pandas_index_metadata, write_json, write_parquet
from app.dataset.records import DatasetSpec, EncodedVideo, EpisodeFrames
from app.dataset.rollover import FileLimits, files_after, next_file, size_mb, table_rolls, video_rolls
from app.dataset.stats import STAT_KEYS, aggregate, image_stats, to_json, vector_stats
from app.errors import DatasetError
from app.runtime.outputs import PARTIAL

log = logging.getLogger(__name__)


class LeRobotWriter:
    """Appends episodes to the LeRobot v3.0 dataset at ``root`` (created, or continued where it stopped).

    Args:
        root: The dataset's folder.
        spec: What every episode holds; must equal the recorded one when ``root`` already holds a dataset.
    """

    def __init__(self, root: str | Path, spec: DatasetSpec, limits: FileLimits = FileLimits()):
        self.root = Path(root)
        self.spec, self.limits = spec, limits
        self._features = v30.features(spec)
        self._tasks: list[str] = []
        self._episodes: list[dict] = []  # rows of meta/episodes, stats included
        self._data: list[pa.Table] = []  # one table per episode of the current data file
        self._meta_first = 0  # the first episode of the current meta/episodes file
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

        An append that fails or is interrupted (at any point: a Ctrl-C between encoding a camera's segment and
        joining it to the video) takes its segment files with it.

        Raises:
            DatasetError: shapes that do not fit the spec, non-finite values, a camera missing.
        """
        before = set(self._segments())
        try:
            return self._append(episode)
        except BaseException:
            for path in set(self._segments()) - before:
                path.unlink(missing_ok=True)
            raise

    def _segments(self) -> list[Path]:
        """The cameras' episode segments being encoded or joined (app.dataset.video_segments.encode_segment)."""
        return list((self.root / "videos").glob(f"*/{PARTIAL}segment.*"))

    def _append(self, episode: EpisodeFrames) -> int:
        n = self._check(episode)
        index = self.n_episodes
        if episode.task not in self._tasks:
            self._tasks.append(episode.task)
        table = self._data_table(episode, index, self._tasks.index(episode.task))
        data_at = self._next_slot("data", v30.DATA_PATH, self.limits.data_files_size_in_mb,
                                  sum(len(t) for t in self._data), n)
        row = {"episode_index": index, "tasks": [episode.task], "length": n, "data/chunk_index": data_at[0],
               "data/file_index": data_at[1], "dataset_from_index": self.n_frames,
               "dataset_to_index": self.n_frames + n}
        for cam in self.spec.cameras:
            row.update(self._append_video(cam.key, episode.images[cam.key]))
        stats = {"observation.state": vector_stats(np.asarray(episode.state, dtype=np.float32)),
                 "action": vector_stats(np.asarray(episode.action, dtype=np.float32))}
        if self.spec.environment_names:
            stats[v30.ENVIRONMENT] = vector_stats(np.asarray(episode.environment_state, dtype=np.float32))
        stats.update({name: vector_stats(table.column(name).to_numpy()) for name in v30.INDEX_COLUMNS})
        stats.update({cam.key: _image_stats(episode.images[cam.key]) for cam in self.spec.cameras})
        for name in self._features:
            row.update({f"stats/{name}/{k}": np.asarray(v).tolist() for k, v in stats[name].items()})
        meta_at = self._next_slot("meta/episodes", v30.EPISODES_PATH, self.limits.data_files_size_in_mb,
                                  len(self._episodes) - self._meta_first, 1)
        row.update({"meta/episodes/chunk_index": meta_at[0], "meta/episodes/file_index": meta_at[1]})
        self._commit(table, row)
        log.info("episode %d: %d frames written to %s", index, n, self.root)
        return index

    def _check(self, episode: EpisodeFrames) -> int:
        state, action = np.asarray(episode.state), np.asarray(episode.action)
        n = len(state)
        want = {"state": (state, len(self.spec.state_names)), "action": (action, len(self.spec.action_names))}
        if self.spec.environment_names:
            environment = np.asarray(episode.environment_state if episode.environment_state is not None else [])
            want["environment state"] = (environment, len(self.spec.environment_names))
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

    def _next_slot(self, kind: str, template: str, limit_mb: float, rows_in_file: int, new_rows: int) -> tuple:
        """(chunk, file) that takes ``new_rows`` more rows of ``kind`` ('data' or 'meta/episodes'): the last
        episode's file, or the next one when it would reach ``limit_mb`` (app.dataset.rollover)."""
        if not self._episodes:
            return 0, 0
        last = self._episodes[-1]
        where = (last[f"{kind}/chunk_index"], last[f"{kind}/file_index"])
        path = self.root / template.format(chunk_index=where[0], file_index=where[1])
        return next_file(where, self.limits.chunks_size) if table_rolls(
            size_mb(path), rows_in_file, new_rows, limit_mb) else where

    def _append_video(self, key: str, frames: np.ndarray | EncodedVideo) -> dict:
        """The episode's segment appended to the camera's last video file, or starting the next one when the file
        would reach video_files_size_in_mb; its from/to timestamps within that file."""
        segment = Path(frames.path) if isinstance(frames, EncodedVideo) else video.encode_segment(
            self.root / "videos" / key, frames, self.spec.fps)
        where, start = (0, 0), 0.0
        if self._episodes:
            last = self._episodes[-1]
            where = (last[f"videos/{key}/chunk_index"], last[f"videos/{key}/file_index"])
            start = last[f"videos/{key}/to_timestamp"]
            current = self.root / v30.VIDEO_PATH.format(video_key=key, chunk_index=where[0], file_index=where[1])
            if video_rolls(size_mb(current), size_mb(segment), self.limits.video_files_size_in_mb):
                where, start = next_file(where, self.limits.chunks_size), 0.0
        path = self.root / v30.VIDEO_PATH.format(video_key=key, chunk_index=where[0], file_index=where[1])
        added = video.append_segment(path, segment)
        return {f"videos/{key}/chunk_index": where[0], f"videos/{key}/file_index": where[1],
                f"videos/{key}/from_timestamp": start, f"videos/{key}/to_timestamp": start + added / self.spec.fps}

    def _data_table(self, episode: EpisodeFrames, index: int, task_index: int) -> pa.Table:
        n = len(episode.state)
        frame_index = np.arange(n, dtype=np.int64)
        columns = {"observation.state": np.asarray(episode.state, dtype=np.float32),
                   "action": np.asarray(episode.action, dtype=np.float32),
                   **({v30.ENVIRONMENT: np.asarray(episode.environment_state, dtype=np.float32)}
                      if self.spec.environment_names else {}),
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
        episodes = self._episodes + [row]
        same_data = len(self._episodes) > 0 and _at(row, "data") == _at(self._episodes[-1], "data")
        data = (self._data if same_data else []) + [table]
        write_parquet(self.root / v30.DATA_PATH.format(chunk_index=row["data/chunk_index"],
                                                       file_index=row["data/file_index"]), data)
        tasks = pa.table({"task_index": pa.array(range(len(self._tasks)), pa.int64()),
                          v30.TASK_INDEX_COLUMN: pa.array(self._tasks, pa.large_string())})
        tasks = tasks.replace_schema_metadata(pandas_index_metadata(v30.TASK_INDEX_COLUMN, {"task_index": "int64"}))
        write_parquet(self.root / v30.TASKS_PATH, [tasks])
        same_meta = len(self._episodes) > 0 and _at(row, "meta/episodes") == _at(self._episodes[-1], "meta/episodes")
        meta_first = self._meta_first if same_meta else len(self._episodes)
        write_parquet(self.root / v30.EPISODES_PATH.format(chunk_index=row["meta/episodes/chunk_index"],
                                                           file_index=row["meta/episodes/file_index"]),
                      [pa.Table.from_pylist(episodes[meta_first:], schema=v30.episodes_schema(self.spec))])
        stats = {name: aggregate([{k: np.asarray(e[f"stats/{name}/{k}"]) for k in STAT_KEYS} for e in episodes])
                 for name in self._features}
        write_json(self.root / v30.STATS_PATH, to_json(stats))
        total_frames = episodes[-1]["dataset_to_index"]
        write_json(self.root / v30.INFO_PATH, v30.info(self.spec, len(episodes), total_frames, len(self._tasks),
                                                       self.limits))
        self._data, self._episodes, self._meta_first = data, episodes, meta_first

    def _resume(self) -> None:
        """Load the counted episodes of an existing dataset (its own file limits); cut what an interrupted append
        left behind: rows past the count, video frames past the last counted episode, files it had begun."""
        info, self._episodes = check_lerobot(self.root, self.spec)
        self.limits = FileLimits.of_info(info)
        n_episodes, n_frames = info["total_episodes"], info["total_frames"]
        self._tasks = pq.read_table(self.root / v30.TASKS_PATH).column(v30.TASK_INDEX_COLUMN).to_pylist()
        last = self._episodes[-1]
        mine = [r for r in self._episodes if _at(r, "data") == _at(last, "data")]
        data = pq.read_table(self.root / v30.DATA_PATH.format(chunk_index=last["data/chunk_index"],
                                                             file_index=last["data/file_index"]))
        first_index = int(data.column("index")[0].as_py())
        self._data = [data.slice(r["dataset_from_index"] - first_index, r["length"]) for r in mine]
        self._meta_first = next(i for i, r in enumerate(self._episodes)
                                if _at(r, "meta/episodes") == _at(last, "meta/episodes"))
        leftovers = files_after(self.root / "data", _at(last, "data"))
        leftovers += files_after(self.root / "meta" / "episodes", _at(last, "meta/episodes"))
        for cam in self.spec.cameras:
            where = _at(last, f"videos/{cam.key}")
            leftovers += files_after(self.root / "videos" / cam.key, where)
            path = self.root / v30.VIDEO_PATH.format(video_key=cam.key, chunk_index=where[0], file_index=where[1])
            video.truncate(path, int(round(last[f"videos/{cam.key}/to_timestamp"] * self.spec.fps)))
        for path in leftovers:
            path.unlink()
        log.info("continuing %s after %d episodes (%d frames)", self.root, n_episodes, n_frames)


def _at(row: dict, kind: str) -> tuple[int, int]:
    """(chunk, file) of ``kind`` ('data', 'meta/episodes', 'videos/<key>') an episode row points at."""
    return row[f"{kind}/chunk_index"], row[f"{kind}/file_index"]


def _image_stats(frames: np.ndarray | EncodedVideo) -> dict:
    return frames.stats if isinstance(frames, EncodedVideo) else image_stats(frames)
