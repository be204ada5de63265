"""Read LeRobot datasets: v3.0 (lerobot >= 0.3.x; files of many episodes) and v2.1 (one parquet and one video
per episode, the layout Trossen's recording fork writes: ``data/chunk-000/episode_000000.parquet``,
``meta/episodes.jsonl``).

Values come back as stored; ``app.dataset.units`` says what they are in. ``info.json``'s ``total_episodes`` is
the commit record: rows past it (left by an interrupted recording) are ignored.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa

from app.dataset.files import read_json, read_parquet
from app.dataset.records import RecordedDataset, RecordedEpisode, VideoSpan
from app.errors import DatasetError

VERSIONS = ("v3.0", "v2.1")
VALUE_COLUMNS = ("observation.state", "action", "timestamp", "index")
ENVIRONMENT = "observation.environment_state"  # read where the dataset has it (objects' state)
EPISODE_KEYS = ["episode_index", "tasks", "length", "data/chunk_index", "data/file_index", "dataset_from_index",
                "dataset_to_index"]
VIDEO_KEYS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")
TEMPLATE_FIELDS = ("chunk_index", "file_index", "episode_chunk", "episode_index", "video_key")  # v3.0 and v2.1


def _vectors(column: pa.ChunkedArray, width: int, what: str, path: Path) -> np.ndarray:
    """A list or fixed-size-list column as float64 rows, shape (n, width); DatasetError naming the file when its
    rows are not ``width`` numbers each."""
    try:
        flat = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)
        rows = flat.astype(np.float64).reshape(len(column), width)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError, ValueError, AttributeError):
        raise DatasetError(f"column {what!r} does not hold {width} numbers a row (info.json's shape)",
                           str(path)) from None
    bad = np.argwhere(~np.isfinite(rows))
    if len(bad):
        raise DatasetError(f"column {what!r} holds {rows[tuple(bad[0])]} at row {bad[0][0]}, value {bad[0][1]}: "
                           "every value must be a finite number", str(path))
    return rows


def _count(info: dict, key: str, least: int, path: Path) -> int:
    value = info.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise DatasetError(f"{key} is {value!r}; expected a whole number >= {least}", str(path))
    return value


def _load_info(root: Path) -> dict:
    path = root / "meta" / "info.json"
    if not path.is_file():
        raise DatasetError("no meta/info.json: not a LeRobot dataset folder", str(root))
    info = read_json(path)
    if info.get("codebase_version") not in VERSIONS:
        raise DatasetError(f"codebase_version is {info.get('codebase_version')!r}; this reader takes "
                           f"{list(VERSIONS)}", str(path))
    feats = info.get("features")
    for key in ("observation.state", "action"):
        feature = feats.get(key) if isinstance(feats, dict) else None
        shape = feature.get("shape") if isinstance(feature, dict) else None
        if not (isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int) and shape[0] >= 1):
            raise DatasetError(f"features.{key} needs a shape [n >= 1] (found {shape!r} among features "
                               f"{sorted(feats) if isinstance(feats, dict) else feats!r})", str(path))
    fps = info.get("fps")
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
        raise DatasetError(f"fps is {fps!r}; expected a rate > 0 [Hz]", str(path))
    _count(info, "total_episodes", 0, path)
    if info["codebase_version"] == "v2.1" or "chunks_size" in info:
        _count(info, "chunks_size", 1, path)
    for key in ("data_path", "video_path"):
        template = info.get(key, "")
        if not isinstance(template, (str, type(None))):
            raise DatasetError(f"{key} is {info[key]!r}; expected a path template", str(path))
        try:
            (template or "").format(**{name: 0 for name in TEMPLATE_FIELDS})
        except (KeyError, IndexError, ValueError) as exc:
            raise DatasetError(f"{key} {template!r} is not a path template of the fields {list(TEMPLATE_FIELDS)} "
                               f"({type(exc).__name__}: {exc})", str(path)) from None
    return info


def _environment(info: dict, rows: pa.Table, path: Path) -> np.ndarray:
    """The rows' ``observation.environment_state`` (n, width), or shape (0, 0) where the dataset has none."""
    feature = info["features"].get(ENVIRONMENT)
    shape = feature.get("shape") if isinstance(feature, dict) else None
    if not (isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int) and shape[0] >= 1) \
            or ENVIRONMENT not in rows.column_names:
        return np.zeros((0, 0))
    return _vectors(rows.column(ENVIRONMENT), shape[0], ENVIRONMENT, path)


def _episode(info: dict, index: int, task: str, rows: pa.Table, videos: dict[str, VideoSpan],
             path: Path) -> RecordedEpisode:
    feats = info["features"]
    if "episode_index" in rows.column_names:
        found = np.unique(rows.column("episode_index").to_numpy(zero_copy_only=False))
        if found.tolist() != [index]:
            raise DatasetError(f"the frames of episode {index} are marked episode_index {found.tolist()[:10]}: the "
                               "data and the episodes' metadata disagree", str(path))
    return RecordedEpisode(
        index=index, task=task,
        state=_vectors(rows.column("observation.state"), feats["observation.state"]["shape"][0], "observation.state",
                       path),
        action=_vectors(rows.column("action"), feats["action"]["shape"][0], "action", path),
        timestamp=rows.column("timestamp").to_numpy().astype(np.float64), videos=videos, images={},
        environment_state=_environment(info, rows, path))


def _episode_rows(root: Path, info: dict, cameras: list[str]) -> list[dict]:
    """meta/episodes' rows of the counted episodes (0 .. total_episodes - 1), each with the keys the reader uses."""
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if not files:
        raise DatasetError("no meta/episodes/*/*.parquet", str(root))
    keys = EPISODE_KEYS + [f"videos/{cam}/{k}" for cam in cameras for k in VIDEO_KEYS]
    rows = []
    for path in files:
        table = read_parquet(path)
        missing = [k for k in keys if k not in table.column_names]
        if missing:
            raise DatasetError(f"no columns {missing}; a v3.0 episode row has {keys}", str(path))
        rows += table.select(keys).to_pylist()
    return _counted(rows, info, root / "meta" / "episodes")


def _counted(rows: list[dict], info: dict, path: Path) -> list[dict]:
    """The rows of episodes 0 .. total_episodes - 1 in order, each once (rows past the count are an interrupted
    recording's); DatasetError naming ``path`` for a gap, a repeat or an index that is not a whole number."""
    if not all(isinstance(r.get("episode_index"), int) and not isinstance(r["episode_index"], bool) for r in rows):
        raise DatasetError("every episode row needs a whole-number episode_index", str(path))
    rows = sorted((r for r in rows if r["episode_index"] < info["total_episodes"]), key=lambda r: r["episode_index"])
    if [r["episode_index"] for r in rows] != list(range(info["total_episodes"])):
        indices = [r["episode_index"] for r in rows]
        raise DatasetError(f"meta/info.json counts {info['total_episodes']} episodes (0 .. "
                           f"{info['total_episodes'] - 1}, each once); the episode rows hold {indices[:10]}"
                           f"{' ...' if len(indices) > 10 else ''}", str(path))
    return rows


def _slice(table: pa.Table, row: dict, path: Path) -> pa.Table:
    """Episode ``row``'s frames of its data file: ``length`` rows whose ``index`` runs dataset_from_index ..
    dataset_to_index - 1 (a length that reaches into the next episode is refused)."""
    index = table.column("index").to_numpy()
    first, n = int(np.searchsorted(index, row["dataset_from_index"])), row["length"]
    got = index[first:first + n] if isinstance(n, int) and n >= 1 else index[:0]
    want = np.arange(row["dataset_from_index"], row["dataset_to_index"])
    if n != len(want) or not np.array_equal(got, want):
        raise DatasetError(f"episode {row['episode_index']}: length {n} and frames {row['dataset_from_index']}.."
                           f"{row['dataset_to_index'] - 1} disagree with the file's index column", str(path))
    return table.slice(first, n)


def _read_v30(root: Path, info: dict, cameras: list[str]) -> list[RecordedEpisode]:
    data: dict[tuple[int, int], tuple[Path, pa.Table]] = {}
    episodes = []
    for row in _episode_rows(root, info, cameras):
        where = (row["data/chunk_index"], row["data/file_index"])
        if where not in data:
            path = root / info["data_path"].format(chunk_index=where[0], file_index=where[1])
            data[where] = path, read_parquet(path, _columns(info))
        path, table = data[where]
        videos = {cam: VideoSpan(str(root / info["video_path"].format(
            video_key=cam, chunk_index=row[f"videos/{cam}/chunk_index"], file_index=row[f"videos/{cam}/file_index"])),
            row[f"videos/{cam}/from_timestamp"], row[f"videos/{cam}/to_timestamp"]) for cam in cameras}
        episodes.append(_episode(info, row["episode_index"], (row["tasks"] or [""])[0], _slice(table, row, path),
                                 videos, path))
    return episodes


def _read_v21(root: Path, info: dict, cameras: list[str]) -> list[RecordedEpisode]:
    path = root / "meta" / "episodes.jsonl"
    if not path.is_file():
        raise DatasetError("v2.1 dataset without meta/episodes.jsonl", str(root))
    try:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        rows = _counted([dict(r) for r in rows], info, path)
    except (ValueError, KeyError, TypeError) as exc:
        raise DatasetError(f"not one JSON object with an episode_index a line ({exc})", str(path)) from None
    chunk_size = info.get("chunks_size", 1000)
    episodes = []
    for row in rows:
        index = row["episode_index"]
        chunk = index // chunk_size
        file = root / info["data_path"].format(episode_chunk=chunk, episode_index=index)
        table = read_parquet(file, _columns(info))
        videos = {cam: VideoSpan(str(root / info["video_path"].format(episode_chunk=chunk, video_key=cam,
                                                                       episode_index=index)),
                                 0.0, row["length"] / info["fps"]) for cam in cameras}
        episodes.append(_episode(info, index, (row.get("tasks") or [""])[0], table, videos, file))
    return episodes


def _environment_names(feats: dict) -> tuple[str, ...]:
    feature = feats.get(ENVIRONMENT)
    names = feature.get("names") if isinstance(feature, dict) else None
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def _columns(info: dict) -> list[str]:
    """The data columns read: the values, and the environment state where info.json names one."""
    extra = [key for key in (ENVIRONMENT, "episode_index") if key in info["features"]]
    return list(VALUE_COLUMNS) + extra


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
                           cameras=tuple(cameras), episodes=tuple(episodes),
                           environment_names=_environment_names(feats))
