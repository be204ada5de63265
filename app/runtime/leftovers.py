"""What a killed process leaves behind (a SIGKILL gives it no chance to clean up), removed by a later one: the
one way the app does it, for temporary URDF copies, partial output files and old kernel-cache folders."""

from __future__ import annotations

import shutil
import time
from pathlib import Path


def remove_stale(folder: Path, pattern: str, older_than_s: float = 0.0, keep: Path | None = None) -> list[Path]:
    """Remove the entries of ``folder`` named like ``pattern`` (a glob) not modified for ``older_than_s`` [s]
    (0: all of them), files and folders alike, except ``keep``. Returns those removed; one that another
    process removes (or touches) meanwhile is left to it."""
    now, removed = time.time(), []
    for path in Path(folder).glob(pattern):
        try:
            if path == keep or now - path.stat().st_mtime < older_than_s:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
        except OSError:
            pass
    return removed
