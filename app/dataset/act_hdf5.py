"""ACT's HDF5 episodes (one file per episode, as ACT and Trossen's MuJoCo kit record them).

Datasets: ``/observations/qpos`` and ``/observations/qvel`` (n, 7 * n_arms), ``/observations/images/<cam>``
(n, h, w, 3) uint8 (deflate-compressed, a chunk per frame), ``/action`` (n, 7 * n_arms); root attribute ``sim``.
The layout has no frame rate or joint names: this writer adds the attributes ``fps`` and ``joint_names`` and the
reader uses them where present, otherwise the Trossen names for the width and the rate it is given.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import h5py
import numpy as np

from app.dataset.joint_names import trossen_names
from app.dataset.records import RecordedDataset, RecordedEpisode
from app.errors import DatasetError
from app.runtime.outputs import write_atomic

ACT_DEFAULT_FPS = 50.0  # ACT's own control period (DT = 0.02 s)
# images by HDF5's standard deflate filter (any HDF5 reader, h5py included, inflates it): level 1 made rendered
# 640x480 frames ~50x smaller at ~2 ms a frame (level 4: 1.5x smaller again at 1.5x the time)
IMAGE_GZIP = 1


def write_act_episode(path: str | Path, qpos: np.ndarray, qvel: np.ndarray, action: np.ndarray,
                      images: dict[str, np.ndarray], fps: float, joint_names: list[str] | None = None) -> Path:
    """One episode as an ACT HDF5 file at ``path``, atomically.

    Args:
        qpos, qvel, action: Shape (n, d) each: joint positions [rad, m], velocities [rad/s, m/s], commands.
        images: Camera name -> (n, h, w, 3) uint8.
        fps: The rows' rate [Hz].
        joint_names: Names of the d values (default: the Trossen kit's for d = 7 or 14).
    """
    qpos, qvel, action = (np.asarray(a, dtype=np.float64) for a in (qpos, qvel, action))
    if qpos.ndim != 2 or qvel.shape != qpos.shape or action.shape != qpos.shape:
        raise DatasetError(f"qpos {qpos.shape}, qvel {qvel.shape}, action {action.shape}: expected three (n, d)")
    names = joint_names or trossen_names(qpos.shape[1] // 7)

    def write(tmp: str) -> None:
        # built in memory, then written as bytes: HDF5 on a full disk fails in its destructors (and may crash
        # the process at exit); Python's own write fails with one OSError
        buffer = io.BytesIO()
        with h5py.File(buffer, "w") as f:
            f.attrs["sim"] = True
            f.attrs["fps"] = float(fps)
            f.attrs["joint_names"] = [n.encode() for n in names]
            f.create_dataset("/observations/qpos", data=qpos)
            f.create_dataset("/observations/qvel", data=qvel)
            for cam, frames in images.items():
                f.create_dataset(f"/observations/images/{cam}", data=frames, dtype=np.uint8,
                                 chunks=(1, *frames.shape[1:]), compression="gzip", compression_opts=IMAGE_GZIP)
            f.create_dataset("/action", data=action)
        Path(tmp).write_bytes(buffer.getbuffer())
    return write_atomic(path, ".hdf5", write)


def _episode_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.glob("*.hdf5"),
                   key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)])
    if not files:
        raise DatasetError("no *.hdf5 episode files", str(path))
    return files


def _read_episode(path: Path, index: int, fps: float) -> tuple[RecordedEpisode, list[str], float]:
    try:
        with h5py.File(path, "r") as f:
            for key in ("/observations/qpos", "/action"):
                if not isinstance(f.get(key), h5py.Dataset):
                    raise DatasetError(f"no {key} dataset; an ACT episode has /observations/qpos, "
                                       "/observations/qvel, /observations/images/<cam> and /action", str(path))
            qpos, action = f["/observations/qpos"][()], f["/action"][()]
            group = f.get("/observations/images", {})
            images = {cam: group[cam][()] for cam in group if isinstance(group[cam], h5py.Dataset)}
            names = [n.decode() if isinstance(n, bytes) else str(n)
                     for n in np.atleast_1d(f.attrs.get("joint_names", []))]
            rate = f.attrs.get("fps", fps)
    except OSError as exc:
        raise DatasetError(f"not a readable HDF5 file ({exc})", str(path)) from None
    _check_episode(path, qpos, action, images, names, rate)
    n = len(qpos)
    episode = RecordedEpisode(index=index, task="", state=qpos.astype(np.float64), action=action.astype(np.float64),
                              timestamp=np.arange(n) / float(rate), videos={}, images=images)
    return episode, names or trossen_names(qpos.shape[1] // 7), float(rate)


def _check_episode(path: Path, qpos, action, images: dict, names: list[str], rate) -> None:
    """What the reader takes from an ACT file, or DatasetError naming it: qpos and action (n >= 1, d) real numbers of
    one shape, images (n, h, w, 3) uint8, joint_names d names, an fps > 0."""
    if not (qpos.ndim == 2 and len(qpos) >= 1 and qpos.shape[1] >= 1 and np.issubdtype(qpos.dtype, np.number)
            and not np.iscomplexobj(qpos)):
        raise DatasetError(f"/observations/qpos has shape {qpos.shape} {qpos.dtype}; expected (n >= 1, d) real "
                           "numbers", str(path))
    if action.shape != qpos.shape or not np.issubdtype(action.dtype, np.number) or np.iscomplexobj(action):
        raise DatasetError(f"/action has shape {action.shape} {action.dtype}; expected {qpos.shape} like "
                           "/observations/qpos", str(path))
    for cam, frames in images.items():
        if frames.ndim != 4 or len(frames) != len(qpos) or frames.shape[3] != 3 or frames.dtype != np.uint8:
            raise DatasetError(f"/observations/images/{cam} has shape {frames.shape} {frames.dtype}; expected "
                               f"({len(qpos)}, h, w, 3) uint8", str(path))
    if names and len(names) != qpos.shape[1]:
        raise DatasetError(f"joint_names has {len(names)} names for {qpos.shape[1]} values a row", str(path))
    if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, (int, float, np.integer, np.floating)) \
            or not np.isfinite(rate) or rate <= 0:
        shown = rate.item() if isinstance(rate, np.generic) else rate
        raise DatasetError(f"fps attribute is {shown!r}; expected a rate > 0 [Hz]", str(path))


def read_act(path: str | Path, fps: float = ACT_DEFAULT_FPS) -> RecordedDataset:
    """ACT HDF5 episodes: one file, or a folder of ``*.hdf5`` files in natural order (``episode_2`` < ``episode_10``).

    Args:
        fps: The rate [Hz] assumed for files without an ``fps`` attribute.
    """
    episodes, names, rate = [], None, fps
    for index, file in enumerate(_episode_files(Path(path))):
        episode, names, rate = _read_episode(file, index, fps)
        episodes.append(episode)
    cams = tuple(episodes[0].images)
    return RecordedDataset(format="act-hdf5", fps=rate, robot_type="", state_names=tuple(names),
                           action_names=tuple(names), cameras=cams, episodes=tuple(episodes))
