"""LeRobot v3.0's fixed names: paths, templates, the default columns and the arrow types of each file.

Read from lerobot's ``src/lerobot/datasets/utils.py`` and checked against a dataset that lerobot 0.4.4
wrote (tests/test_dataset_lerobot.py).
"""

from __future__ import annotations

import pyarrow as pa

from app.dataset.records import DatasetSpec
from app.dataset.rollover import FileLimits
from app.dataset.stats import STAT_KEYS
from app.dataset.video_segments import CODEC, PIX_FMT

VERSION = "v3.0"
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
INFO_PATH = "meta/info.json"
STATS_PATH = "meta/stats.json"
TASKS_PATH = "meta/tasks.parquet"
ENVIRONMENT = "observation.environment_state"  # LeRobot's name for the objects' state (a vector per frame)
INDEX_COLUMNS = ("timestamp", "frame_index", "episode_index", "index", "task_index")  # after state/action
TASK_INDEX_COLUMN = "__index_level_0__"  # pandas' name for an unnamed index stored as a column


def features(spec: DatasetSpec) -> dict[str, dict]:
    """``info.json``'s ``features``: state, action, the environment state (where the spec names one), each camera,
    then the index columns (lerobot's order)."""
    out = {"observation.state": {"dtype": "float32", "shape": [len(spec.state_names)],
                                 "names": list(spec.state_names)},
           "action": {"dtype": "float32", "shape": [len(spec.action_names)], "names": list(spec.action_names)}}
    if spec.environment_names:
        out[ENVIRONMENT] = {"dtype": "float32", "shape": [len(spec.environment_names)],
                            "names": list(spec.environment_names)}
    for cam in spec.cameras:
        out[cam.key] = {"dtype": "video", "shape": [cam.height, cam.width, 3], "names": ["height", "width", "channels"],
                        "info": {"video.height": cam.height, "video.width": cam.width, "video.codec": CODEC,
                                 "video.pix_fmt": PIX_FMT, "video.is_depth_map": False, "video.fps": spec.fps,
                                 "video.channels": 3, "has_audio": False}}
    out["timestamp"] = {"dtype": "float32", "shape": [1], "names": None}
    for name in INDEX_COLUMNS[1:]:
        out[name] = {"dtype": "int64", "shape": [1], "names": None}
    return out


def data_schema(spec: DatasetSpec) -> pa.Schema:
    """The arrow schema of ``data/*.parquet`` (vectors are fixed-size float32 lists)."""
    fields = [pa.field("observation.state", pa.list_(pa.float32(), len(spec.state_names))),
              pa.field("action", pa.list_(pa.float32(), len(spec.action_names)))]
    if spec.environment_names:
        fields.append(pa.field(ENVIRONMENT, pa.list_(pa.float32(), len(spec.environment_names))))
    fields.append(pa.field("timestamp", pa.float32()))
    fields += [pa.field(name, pa.int64()) for name in INDEX_COLUMNS[1:]]
    return pa.schema(fields)


def _stat_type(feature: dict, stat: str) -> pa.DataType:
    if stat == "count":
        return pa.list_(pa.int64())
    if feature["dtype"] == "video":
        return pa.list_(pa.list_(pa.list_(pa.float64())))
    keeps_int = feature["dtype"] == "int64" and stat in ("min", "max")
    return pa.list_(pa.int64() if keeps_int else pa.float64())


def episodes_schema(spec: DatasetSpec) -> pa.Schema:
    """The arrow schema of ``meta/episodes/*.parquet``: indices, per camera its video span, per feature its
    stats, and where this row's metadata file is."""
    fields = [pa.field("episode_index", pa.int64()), pa.field("tasks", pa.list_(pa.string())),
              pa.field("length", pa.int64()), pa.field("data/chunk_index", pa.int64()),
              pa.field("data/file_index", pa.int64()), pa.field("dataset_from_index", pa.int64()),
              pa.field("dataset_to_index", pa.int64())]
    for cam in spec.cameras:
        fields += [pa.field(f"videos/{cam.key}/chunk_index", pa.int64()),
                   pa.field(f"videos/{cam.key}/file_index", pa.int64()),
                   pa.field(f"videos/{cam.key}/from_timestamp", pa.float64()),
                   pa.field(f"videos/{cam.key}/to_timestamp", pa.float64())]
    for name, feature in features(spec).items():
        fields += [pa.field(f"stats/{name}/{stat}", _stat_type(feature, stat)) for stat in STAT_KEYS]
    fields += [pa.field("meta/episodes/chunk_index", pa.int64()), pa.field("meta/episodes/file_index", pa.int64())]
    return pa.schema(fields)


def info(spec: DatasetSpec, total_episodes: int, total_frames: int, total_tasks: int,
         limits: FileLimits = FileLimits()) -> dict:
    """``meta/info.json`` for a dataset of these totals, written with these file limits."""
    return {"codebase_version": VERSION, "robot_type": spec.robot_type, "total_episodes": total_episodes,
            "total_frames": total_frames, "total_tasks": total_tasks, "chunks_size": limits.chunks_size,
            "data_files_size_in_mb": limits.data_files_size_in_mb,
            "video_files_size_in_mb": limits.video_files_size_in_mb,
            "fps": spec.fps, "splits": {"train": f"0:{total_episodes}"}, "data_path": DATA_PATH,
            "video_path": VIDEO_PATH if spec.cameras else None, "features": features(spec)}
