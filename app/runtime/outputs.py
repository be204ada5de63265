"""A run's output files, all or nothing: written under temporary names in the output folder and
renamed into place together at the very end, so that a failed or interrupted run leaves the
previous outputs as they were. Temporary names start with ``.app-partial.``; a run removes the
ones a killed earlier run left in its folder before it starts (one run per folder at a time).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from app.errors import AppError
from app.runtime.leftovers import remove_stale

PARTIAL = ".app-partial."
_TEMPORARY = re.compile(re.escape(PARTIAL) + r"(?P<stem>.+)\.[^.]+(?P<suffix>\.[^.]+)$")  # what mkstemp names here


def output_path(path: str | Path) -> Path:
    """The output a temporary file of this module stands for (``.app-partial.report.x1y2.json`` -> ``report.json``
    in the same folder); any other path as it is. Errors name the file the user asked for, not ours."""
    path = Path(path)
    found = _TEMPORARY.match(path.name)
    return path.with_name(found["stem"] + found["suffix"]) if found else path


def probe_write(folder: Path) -> None:
    """Raises OSError unless a file can be created in the existing ``folder`` (the probe is removed again)."""
    fd, probe = tempfile.mkstemp(prefix=PARTIAL + "probe.", dir=folder)
    os.close(fd)
    os.unlink(probe)


class OutputSet:
    """The files one run writes into ``folder``.

    Raises AppError at construction when the folder cannot be created or written (before any work).
    """

    def __init__(self, folder: str | Path, named: str | None = None):
        """``named``: how errors name the folder (default ``--out FOLDER``; an environment variable's setting)."""
        self.folder = Path(folder)
        named = named or f"--out {self.folder}"
        if self.folder.exists() and not self.folder.is_dir():
            raise AppError(f"{named}: exists and is not a folder")
        missing = [p for p in (self.folder, *self.folder.parents) if not p.exists()]
        self._made = missing[-1] if missing else None  # the top folder this run creates (removed again if unused)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe_write(self.folder)
        except OSError as exc:
            raise AppError(f"{named}: cannot create or write this folder ({exc.strerror})") from None
        self._pending: dict[Path, Path] = {}  # final -> temporary
        self.remove_stale()

    def remove_stale(self) -> list[Path]:
        """Remove temporary files that an earlier, killed run left in the folder."""
        return remove_stale(self.folder, f"{PARTIAL}*")

    def temporary(self, name: str) -> Path:
        """Where to write the output ``name`` now (same suffix, hidden, in the folder)."""
        final = self.folder / name
        fd, tmp = tempfile.mkstemp(prefix=f"{PARTIAL}{Path(name).stem}.", suffix=Path(name).suffix, dir=self.folder)
        os.close(fd)
        self._pending[final] = Path(tmp)
        return Path(tmp)

    def commit(self) -> dict[str, Path]:
        """Rename every temporary file into place (readable by all). Returns name -> final path."""
        done = {}
        for final, tmp in self._pending.items():
            os.chmod(tmp, 0o644)  # mkstemp made it private
            os.replace(tmp, final)
            done[final.name] = final
        self._pending.clear()
        return done

    def discard(self) -> None:
        """Remove every temporary file (the run failed or was interrupted), and the folders this run created
        where they are left empty: a refused run leaves nothing behind."""
        for tmp in self._pending.values():
            tmp.unlink(missing_ok=True)
        self._pending.clear()
        if self._made is None:
            return
        for folder in (self.folder, *self.folder.parents):
            try:
                folder.rmdir()  # only an empty folder goes
            except OSError:
                return
            if folder == self._made:
                return


def write_atomic(path: str | Path, suffix: str, write: Callable[[str], None]) -> Path:
    """``write(tmp)`` into a temporary file beside ``path`` (its name starts with ``.app-partial.`` and ends in
    ``suffix``, as ffmpeg and numpy want), then renamed onto ``path``; on any failure nothing is left."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=suffix, prefix=f"{PARTIAL}{path.stem}.", dir=path.parent)
        os.close(fd)
        write(tmp)
        os.replace(tmp, path)
        os.chmod(path, 0o644)  # mkstemp made it private
    except OSError as exc:  # a full or read-only file system, a folder taken away: one line, nothing left
        raise AppError(f"cannot write {output_path(path)}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path
