"""What a recording finds in its output folder before it writes anything there: a LeRobot v3.0 dataset or ACT
HDF5 episodes it may continue (the same features, fps, names, units; every file the counted episodes need present
and whole), nothing, or someone's files it must not write over. Every refusal is a DatasetError naming the file
and what would be allowed, raised before any file changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import h5py
import numpy as np

import app.dataset.v30_schema as v30
from app.dataset.files import read_json, read_parquet
from app.dataset.records import DatasetSpec
from app.dataset.units import detect_units
from app.dataset.video_segments import count_frames
from app.errors import DatasetError

# what a LeRobot or ACT recording writes: a folder holding any of them but no dataset is someone else's
WRITTEN = ("meta/info.json", "meta/stats.json", "meta/tasks.parquet", "meta/episodes", "meta/cameras.json",
           "meta/camera_poses.parquet", "data", "videos", "depth")
ACT_EPISODE = re.compile(r"episode_(\d+)\.hdf5")
NEW_MARK = ".app-partial.new-dataset"  # a recording began a new dataset here and has not counted an episode yet


def foreign_files(root: Path) -> list[str]:
    """The paths under ``root`` a recording would write that are there though ``root`` holds no dataset of ours
    (nor the mark of a new one an interrupted recording began)."""
    if (root / NEW_MARK).exists():
        return []
    return [name for name in WRITTEN if (root / name).exists()]


def act_episodes(root: Path) -> dict[int, Path]:
    """``episode_N.hdf5`` files in ``root`` by N."""
    found = {}
    for path in root.glob("episode_*.hdf5") if root.is_dir() else ():
        m = ACT_EPISODE.fullmatch(path.name)
        if m:
            found[int(m.group(1))] = path
    return dict(sorted(found.items()))


def _check_units(units: str, values: np.ndarray, path: Path) -> None:
    found = detect_units(values)
    if found.units != units:
        option = "with --trossen-units" if found.units == "trossen" else "without --trossen-units"
        raise DatasetError(f"the recorded episodes are in {found.units} units ({found.reason}); a continuation in "
                           f"{units} would mix them: record {option} or choose a new --out", str(path))


def lerobot_info(root: Path, spec: DatasetSpec) -> dict:
    """``meta/info.json`` of the dataset at ``root`` when ``spec``'s episodes may follow its own."""
    path = root / v30.INFO_PATH
    info = read_json(path)
    if info.get("codebase_version") != v30.VERSION:
        raise DatasetError(f"codebase_version is {info.get('codebase_version')!r}; only a {v30.VERSION} dataset "
                           "can be continued: choose a new --out", str(path))
    total = info.get("total_episodes")
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise DatasetError(f"total_episodes is {total!r}; a dataset to continue counts at least 1 episode "
                           "(remove the folder to start anew)", str(path))
    if info.get("fps") != spec.fps:
        raise DatasetError(f"recorded at fps {info.get('fps')!r}; this recording's is {spec.fps}: use the same "
                           "video.fps or a new --out", str(path))
    want, have = json.loads(json.dumps(v30.features(spec))), info.get("features")
    if want != have:
        have = have if isinstance(have, dict) else {}
        differ = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
        raise DatasetError(f"features {differ} differ from this recording's (other joint names, cameras or "
                           "sizes); continue it with the same robot and cameras or choose a new --out", str(path))
    return info


def lerobot_rows(root: Path, info: dict) -> list[dict]:
    """The counted episodes' rows of ``meta/episodes`` (episode indices 0 .. total - 1, each once)."""
    files = sorted((root / "meta" / "episodes").glob("chunk-*/file-*.parquet"))
    rows = [r for path in files for r in read_parquet(path).to_pylist()]
    rows = sorted((r for r in rows if r.get("episode_index", -1) < info["total_episodes"]),
                  key=lambda r: r["episode_index"])
    if [r["episode_index"] for r in rows] != list(range(info["total_episodes"])):
        raise DatasetError(f"meta/info.json counts {info['total_episodes']} episodes but meta/episodes holds rows "
                           f"for {len(rows)} of them: the dataset is damaged; choose a new --out",
                           str(root / "meta" / "episodes"))
    return rows


def check_lerobot(root: Path, spec: DatasetSpec, units: str | None = None) -> tuple[dict, list[dict]]:
    """(info, counted episode rows) of the dataset at ``root`` that ``spec``'s episodes, in ``units`` (None:
    not checked), may continue: every file they point at there and whole (the videos hold their frames).

    Raises:
        DatasetError: naming the file that does not fit, before anything is written.
    """
    info = lerobot_info(root, spec)
    rows = lerobot_rows(root, info)
    tasks = read_parquet(root / v30.TASKS_PATH)
    if v30.TASK_INDEX_COLUMN not in tasks.column_names:
        raise DatasetError(f"no {v30.TASK_INDEX_COLUMN} column of task texts", str(root / v30.TASKS_PATH))
    known = set(tasks.column(v30.TASK_INDEX_COLUMN).to_pylist())
    missing = sorted({t for r in rows for t in (r.get("tasks") or [])} - known)
    if missing:
        raise DatasetError(f"lacks the tasks {missing} the episodes name", str(root / v30.TASKS_PATH))
    last = rows[-1]
    data = root / v30.DATA_PATH.format(chunk_index=last["data/chunk_index"], file_index=last["data/file_index"])
    index = read_parquet(data, ["index"]).column("index").to_numpy()
    if len(index) == 0 or index[-1] < last["dataset_to_index"] - 1:
        raise DatasetError(f"holds frames up to {index[-1] if len(index) else 'none'}, the episodes counted need "
                           f"up to {last['dataset_to_index'] - 1}: truncated; choose a new --out", str(data))
    for cam in spec.cameras:
        _check_videos(root, cam.key, rows, spec.fps)
    if units is not None:
        stats = read_json(root / v30.STATS_PATH).get("observation.state", {})
        try:
            values = np.array([stats["min"], stats["max"]], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            raise DatasetError("no observation.state min and max", str(root / v30.STATS_PATH)) from None
        _check_units(units, values, root / v30.STATS_PATH)
    return info, rows


def _check_videos(root: Path, key: str, rows: list[dict], fps: float) -> None:
    """Every video file of camera ``key`` the rows point at holds the frames they count in it."""
    needed: dict[tuple, int] = {}
    for r in rows:
        where = (r[f"videos/{key}/chunk_index"], r[f"videos/{key}/file_index"])
        needed[where] = max(needed.get(where, 0), int(round(r[f"videos/{key}/to_timestamp"] * fps)))
    for (chunk, file), n in needed.items():
        path = root / v30.VIDEO_PATH.format(video_key=key, chunk_index=chunk, file_index=file)
        if not path.is_file():
            raise DatasetError("missing (the episodes counted point at it)", str(path))
        try:
            found = count_frames(path)
        except DatasetError:
            found = 0
        if found < n:
            raise DatasetError(f"holds {found} readable frames, the episodes counted need {n}: truncated or damaged;"
                               " choose a new --out", str(path))


def check_act(root: Path, names: tuple[str, ...], fps: float, units: str) -> int:
    """How many ACT episodes (``episode_0.hdf5`` ..) ``root`` holds that episodes of ``names`` at ``fps`` in
    ``units`` may follow; the next one is ``episode_<that>.hdf5``.

    Raises:
        DatasetError: a file unreadable, of other joints, rate or units, or a gap in the numbers.
    """
    found = act_episodes(root)
    if list(found) != list(range(len(found))):
        raise DatasetError(f"holds ACT episodes {list(found)}, not 0..{len(found) - 1}: a continuation would "
                           "leave gaps or write over one; choose a new --out", str(root))
    values = []
    for path in found.values():
        try:
            with h5py.File(path, "r") as f:
                qpos = np.asarray(f["/observations/qpos"][()], dtype=np.float64)
                had = [n.decode() if isinstance(n, bytes) else str(n) for n in f.attrs.get("joint_names", [])]
                rate = float(f.attrs.get("fps", fps))
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise DatasetError(f"not a readable ACT episode ({exc})", str(path)) from None
        if qpos.ndim != 2 or qpos.shape[1] != len(names) or (had and tuple(had) != tuple(names)) or rate != fps:
            raise DatasetError(f"holds joints {had or qpos.shape} at {rate:g} fps; this recording's are {list(names)} "
                               f"at {fps:g} fps: choose a new --out", str(path))
        values.append(qpos)
    if values:
        _check_units(units, np.vstack(values), root)
    return len(found)
