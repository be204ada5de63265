"""One writer at a time in a folder (a dataset being recorded): an exclusive ``fcntl.flock`` on ``.app-lock`` in it,
holding the writer's pid. The kernel drops the lock when its process dies (kill -9 included), so a lock left by a
dead process is simply taken over; a live one makes the second writer stop with one line naming its pid. The file
is removed when the lock is given back."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from app.errors import AppError

LOCK_NAME = ".app-lock"


class FolderInUseError(AppError):
    """Another live process writes into the folder.

    Attributes:
        folder: The folder.
        pid: The other writer's process id (None where it had not written it yet).
    """

    def __init__(self, folder: Path, pid: int | None):
        self.folder, self.pid = folder, pid
        who = f"pid {pid}" if pid is not None else "another process"
        super().__init__(f"dataset {folder} is in use by {who} (one recording at a time into a folder); wait for "
                         f"it to finish or choose another --out")


class FolderLock:
    """``with FolderLock(folder):`` holds ``folder``'s writer lock (the folder must exist)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise :class:`FolderInUseError`; AppError when the folder cannot hold the file."""
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise AppError(f"--out {self.folder}: cannot create {LOCK_NAME} ({exc.strerror})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fd)
                os.close(fd)
                raise FolderInUseError(self.folder, pid) from None
            if _same_file(fd, self.path):  # not a file its last holder removed after we opened it
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Give the lock back and remove its file."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
