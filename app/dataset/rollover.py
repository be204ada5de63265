"""When LeRobot v3.0 files roll over to the next ``file-NNN`` / ``chunk-NNN``, with lerobot's meaning (its
``lerobot_dataset.py``, 0.4.4): a data or episode-metadata parquet file takes an episode unless its size plus the
episode's estimated size (the file's average per row times the episode's rows) would reach
``data_files_size_in_mb``; a video file takes an episode's segment unless its size plus the segment's would reach
``video_files_size_in_mb``; a chunk folder holds ``chunks_size`` files, then the next chunk begins at file 0.
Sizes in MiB (2**20 bytes), as lerobot's ``get_file_size_in_mb``. (lerobot 0.4.4 averages the episode metadata
file's size over the last episode's index rather than its rows; here rows, the same rule for every parquet file.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

MIB = 1024.0 ** 2


class FileLimits(NamedTuple):
    """info.json's ``chunks_size`` (files per chunk folder) and size limits [MiB] (lerobot's defaults)."""

    chunks_size: int = 1000
    data_files_size_in_mb: float = 100
    video_files_size_in_mb: float = 200

    @classmethod
    def of_info(cls, info: dict) -> FileLimits:
        """The limits a dataset's info.json records (lerobot's defaults where absent)."""
        return cls(*(info.get(name, default) for name, default in cls._field_defaults.items()))


def next_file(where: tuple[int, int], chunks_size: int) -> tuple[int, int]:
    """The (chunk, file) after ``where``: the next file, or file 0 of the next chunk after ``chunks_size`` files."""
    chunk, file = where
    return (chunk + 1, 0) if file >= chunks_size - 1 else (chunk, file + 1)


def size_mb(path: Path) -> float:
    """A file's size [MiB]; 0 where it does not exist."""
    return path.stat().st_size / MIB if path.exists() else 0.0


def table_rolls(file_mb: float, rows_in_file: int, new_rows: int, limit_mb: float) -> bool:
    """Whether a parquet file of ``file_mb`` holding ``rows_in_file`` rows passes to the next file for
    ``new_rows`` more."""
    per_row = file_mb / rows_in_file if rows_in_file > 0 else 0.0
    return file_mb + per_row * new_rows >= limit_mb


def video_rolls(file_mb: float, segment_mb: float, limit_mb: float) -> bool:
    """Whether a video file of ``file_mb`` passes to the next file for a segment of ``segment_mb``."""
    return file_mb + segment_mb >= limit_mb


def files_after(folder: Path, where: tuple[int, int]) -> list[Path]:
    """The ``chunk-NNN/file-NNN.*`` files under ``folder`` past ``where`` (an interrupted append's leftovers)."""
    out = []
    for path in folder.glob("chunk-*/file-*.*"):
        m = re.fullmatch(r"chunk-(\d+)", path.parent.name), re.fullmatch(r"file-(\d+)\..*", path.name)
        if m[0] and m[1] and (int(m[0].group(1)), int(m[1].group(1))) > tuple(where):
            out.append(path)
    return sorted(out)
