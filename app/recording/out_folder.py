"""A recording's ``--out`` folder, looked at before the simulation: a folder it can write (not a file, not below
one, writable), held by one recording at a time (app.runtime.folder_lock), and either new or a dataset of this
format, robot, rate, units and cameras that the new episodes continue. Anything else is refused in one line with
the folder as it was; a continued dataset's leftovers of a killed recording (ours only) are removed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from app.config.schema import RunConfig
from app.dataset import ROBOT_TYPES, DatasetSpec
from app.dataset.continuation import NEW_MARK, WRITTEN, act_episodes, check_act, check_lerobot, foreign_files
from app.dataset.files import read_json
from app.errors import AppError, DatasetError
from app.recording.blocks import environment_names, joint_names
from app.recording.episode_cameras import cameras_json, dataset_cameras
from app.runtime.leftovers import remove_stale
from app.runtime.outputs import PARTIAL

CONCAT_LISTING = "file '"  # how the video appends' ffmpeg listings (tmp*.txt before they were named ours) begin


def check_writable(out: Path) -> None:
    """``out`` is a folder, or can be made one: not a file, not below a file, its nearest existing folder
    writable. Raises AppError naming --out."""
    if out.exists() and not out.is_dir():
        raise AppError(f"--out {out}: exists and is not a folder; name a folder (new or a dataset to continue)")
    above = out
    while not above.exists():
        above = above.parent
    if not above.is_dir():
        raise AppError(f"--out {out}: {above} is a file, so no folder can be made below it")
    if not os.access(above, os.W_OK | os.X_OK):
        raise AppError(f"--out {out}: {above} is not writable by this user")


def dataset_spec(run: RunConfig, naming: str = "kits") -> DatasetSpec:
    """The LeRobot spec of ``run``'s episodes, its joints named in ``naming`` (app.dataset.joint_names)."""
    names = tuple(joint_names(run, naming))
    return DatasetSpec(run.video.fps, ROBOT_TYPES[len(names) // 7], names, names, dataset_cameras(run),
                       tuple(environment_names(run)))


def episodes_there(out: Path, run: RunConfig, fmt: str, units: str, naming: str = "kits") -> int:
    """How many episodes ``out`` already holds that this recording continues (0: a new dataset).

    Raises:
        DatasetError: the folder holds another format, a damaged dataset, one of other joints, rate, units or
            cameras, or someone's files the recording would write over.
    """
    lerobot, act = (out / "meta" / "info.json").exists(), act_episodes(out)
    if lerobot and fmt != "lerobot" or act and fmt != "act-hdf5":
        raise DatasetError(f"holds a {'LeRobot' if lerobot else 'ACT HDF5'} dataset; --format {fmt} cannot "
                           "continue it: use its format or a new --out", str(out))
    if lerobot:
        info, _ = check_lerobot(out, dataset_spec(run, naming), units)
        n = info["total_episodes"]
    elif act:
        n = check_act(out, tuple(joint_names(run, naming)), float(run.video.fps), units)
    else:
        found = foreign_files(out) + others_files(out)
        if found:
            raise DatasetError(f"holds {sorted(set(found))[:5]}{' ...' if len(set(found)) > 5 else ''} but no "
                               "dataset (meta/info.json, episode_N.hdf5): a recording starts a new dataset in a new "
                               "or empty folder only, so nothing of yours is mixed with it or written over",
                               str(out))
        return 0
    check_cameras(out, run)
    return n


def others_files(out: Path) -> list[str]:
    """What ``out`` holds that is visible and not a new dataset's (an interrupted recording's mark and leftovers,
    the lock, and hidden files such as a ``.gitkeep`` do not count): names, folders with a trailing slash."""
    if not out.is_dir() or (out / NEW_MARK).exists():
        return []
    return [p.name + ("/" if p.is_dir() else "") for p in out.iterdir() if not p.name.startswith(".")]


def check_cameras(out: Path, run: RunConfig) -> None:
    """The continued dataset's ``meta/cameras.json`` is this recording's (the same cameras, mounts and sizes)."""
    path = out / "meta" / "cameras.json"
    want = json.loads(json.dumps(cameras_json(run)))
    if not path.exists():
        if want:
            raise DatasetError(f"the dataset has no meta/cameras.json but this recording has cameras {sorted(want)}:"
                               " choose a new --out", str(out))
        return
    have = read_json(path)
    if have != want:
        differ = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
        raise DatasetError(f"cameras {differ} differ from this recording's (moved, resized or added): the recorded "
                           "episodes were taken with the recorded ones; restore them or choose a new --out", str(path))


def remove_leftovers(out: Path) -> list[Path]:
    """A killed recording's temporary files in the dataset (``.app-partial.*``, the new-dataset mark kept) and
    the video appends' ffmpeg listings (``tmp*.txt`` holding ``file '...'`` lines). Called with the lock held."""
    removed = []
    for folder in [out, *(p for p in out.rglob("*") if p.is_dir() and not p.name.startswith(PARTIAL))]:
        removed += remove_stale(folder, f"{PARTIAL}*", keep=out / NEW_MARK)
        for path in folder.glob("tmp*.txt"):
            if _is_listing(path):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _is_listing(path: Path) -> bool:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return bool(lines) and all(line.startswith(CONCAT_LISTING) for line in lines)


def begin_new(out: Path) -> None:
    """Mark ``out`` as a new dataset being begun (so that a recording killed before its first episode counted
    may start it again), clearing what such a killed one had written."""
    if (out / NEW_MARK).exists():
        _remove_written(out)
    (out / NEW_MARK).touch()


def end_new(out: Path, failed: bool = False) -> None:
    """Remove the new-dataset mark once the dataset counts an episode or nothing was written. A recording that
    ``failed`` (an error or a signal) before the new dataset counted an episode takes back what it wrote, so that
    no folder is left holding data without ``meta/info.json``."""
    mark = out / NEW_MARK
    if not mark.exists() or (out / "meta" / "info.json").exists() or act_episodes(out):
        mark.unlink(missing_ok=True)
        return
    if failed:
        _remove_written(out)
        remove_leftovers(out)
    if not any((out / name).exists() for name in WRITTEN):
        mark.unlink()
        meta = out / "meta"
        if meta.is_dir() and not any(meta.iterdir()):
            meta.rmdir()


def _remove_written(out: Path) -> None:
    for name in WRITTEN:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
