"""Read LeRobot datasets: v3.0 (lerobot >= 0.3.x; files of many episodes) and v2.1 (one parquet and one video
per episode, the layout Trossen's recording fork writes: ``data/chunk-000/episode_000000.parquet``,
``meta/episodes.jsonl``).

Values come back as stored; ``app.dataset.units`` says what they are in. ``info.json``'s ``total_episodes`` is
the commit record: rows past it (left by an interrupted recording) are ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from app.dataset.records import RecordedDataset, RecordedEpisode, VideoSpan
from app.errors import DatasetError

VERSIONS = ("v3.0", "v2.1")
VALUE_COLUMNS = ("observation.state", "action", "timestamp", "index")


def _vectors(column: pa.ChunkedArray, width: int) -> np.ndarray:
    """A list or fixed-size-list column as float64 rows, shape (n, width)."""
    flat = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return flat.astype(np.float64).reshape(len(column), width)


def _load_info(root: Path) -> dict:
    path = root / "meta" / "info.json"
    if not path.is_file():
        raise DatasetError("no meta/info.json: not a LeRobot dataset folder", str(root))
    info = json.loads(path.read_text())
    if info.get("codebase_version") not in VERSIONS:
        raise DatasetError(f"meta/info.json codebase_version is {info.get('codebase_version')!r}; this reader "
                           f"takes {list(VERSIONS)}", str(root))
    for key in ("observation.state", "action"):
        if key not in info.get("features", {}):
            raise DatasetError(f"meta/info.json features have no {key!r} (found {sorted(info.get('features', {}))})",
                               str(root))
    return info


def _episode(info: dict, index: int, task: str, rows: pa.Table, videos: dict[str, VideoSpan]) -> RecordedEpisode:
    feats = info["features"]
    return RecordedEpisode(
        index=index, task=task,
        state=_vectors(rows.column("observation.state"), feats["observation.state"]["shape"][0]),
        action=_vectors(rows.column("action"), feats["action"]["shape"][0]),
        timestamp=rows.column("timestamp").to_numpy().astype(np.float64), videos=videos, images={})


def _read_v30(root: Path, info: dict, cameras: list[str]) -> list[RecordedEpisode]:
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if not files:
        raise DatasetError("no meta/episodes/*/*.parquet", str(root))
    columns = None
    rows = []
    for path in files:
        table = pq.read_table(path)
        columns = columns or [c for c in table.column_names if not c.startswith("stats/")]
        rows += table.select(columns).to_pylist()
    rows = sorted(rows, key=lambda r: r["episode_index"])[:info["total_episodes"]]
    data: dict[tuple[int, int], pa.Table] = {}
    episodes = []
    for row in rows:
        where = (row["data/chunk_index"], row["data/file_index"])
        if where not in data:
            path = root / info["data_path"].format(chunk_index=where[0], file_index=where[1])
            data[where] = pq.read_table(path, columns=list(VALUE_COLUMNS))
        table = data[where]
        first = int(np.searchsorted(table.column("index").to_numpy(), row["dataset_from_index"]))
        videos = {cam: VideoSpan(str(root / info["video_path"].format(
            video_key=cam, chunk_index=row[f"videos/{cam}/chunk_index"], file_index=row[f"videos/{cam}/file_index"])),
            row[f"videos/{cam}/from_timestamp"], row[f"videos/{cam}/to_timestamp"]) for cam in cameras}
        episodes.append(_episode(info, row["episode_index"], (row["tasks"] or [""])[0],
                                 table.slice(first, row["length"]), videos))
    return episodes


def _read_v21(root: Path, info: dict, cameras: list[str]) -> list[RecordedEpisode]:
    path = root / "meta" / "episodes.jsonl"
    if not path.is_file():
        raise DatasetError("v2.1 dataset without meta/episodes.jsonl", str(root))
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = sorted(rows, key=lambda r: r["episode_index"])[:info["total_episodes"]]
    chunk_size = info.get("chunks_size", 1000)
    episodes = []
    for row in rows:
        index = row["episode_index"]
        chunk = index // chunk_size
        table = pq.read_table(root / info["data_path"].format(episode_chunk=chunk, episode_index=index),
                              columns=list(VALUE_COLUMNS))
        videos = {cam: VideoSpan(str(root / info["video_path"].format(episode_chunk=chunk, video_key=cam,
                                                                       episode_index=index)),
                                 0.0, row["length"] / info["fps"]) for cam in cameras}
        episodes.append(_episode(info, index, (row.get("tasks") or [""])[0], table, videos))
    return episodes


def read_lerobot(root: str | Path) -> RecordedDataset:
    """The LeRobot dataset (v3.0 or v2.1) at ``root``.

    Raises:
        DatasetError: not a LeRobot folder, another version, or a file it names is missing.
    """
    root = Path(root)
    info = _load_info(root)
    feats = info["features"]
    cameras = [k for k, f in feats.items() if f.get("dtype") == "video"]
    read = _read_v30 if info["codebase_version"] == "v3.0" else _read_v21
    try:
        episodes = read(root, info, cameras)
    except FileNotFoundError as exc:
        raise DatasetError(f"a file the metadata names is missing: {exc.filename}", str(root)) from None
    return RecordedDataset(format=f"lerobot-{info['codebase_version']}", fps=float(info["fps"]),
                           robot_type=info.get("robot_type") or "",
                           state_names=tuple(feats["observation.state"].get("names") or ()),
                           action_names=tuple(feats["action"].get("names") or ()),
                           cameras=tuple(cameras), episodes=tuple(episodes))
