"""Where numba keeps the compiled kernels: one cache folder per version of the package's source.

Numba's own cache (``cache=True``) is checked against the time stamp of the file that defines each
function only, not the files of the functions it calls and inlines: after an edit to
``app/ik/_linalg.py`` the LM loop in ``app/ik/_lm.py`` kept running the old Cholesky from its cache
(seen here: 10 % slower, and it could as well have been wrong). Keying the folder on a hash of every
source file of the package that uses numba makes any edit to a kernel compile afresh once; folders of other versions are removed after an hour.

:func:`configure` must run before any kernel module is imported (``app/__init__.py`` calls it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from pathlib import Path

from app.runtime.leftovers import remove_stale

log = logging.getLogger(__name__)
PACKAGE = Path(__file__).resolve().parents[1]  # app/: every kernel's source is hashed (not app/kernels/ alone)
HERE = Path(__file__).resolve().parent  # app/kernels/: where the versioned folders are kept
PREFIX = "numba-"
STALE_AFTER_S = 3600.0
fresh = False  # set by configure(): no kernel compiled for this source yet (the first run compiles, ~30 s)


def source_hash(package: Path = PACKAGE) -> str:
    """First 16 hex digits of the SHA-256 over the ``.py`` files of ``package`` that import numba (paths and
    contents): a compiled function calls only compiled functions, so these are all a kernel depends on,
    and an edit elsewhere does not cost a recompile."""
    digest = hashlib.sha256()
    for path in kernel_sources(package):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def kernel_sources(package: Path = PACKAGE) -> list[Path]:
    """The ``.py`` files of ``package`` that import numba, sorted (what :func:`source_hash` covers)."""
    return [path for path in sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)
            if re.search(rb"^\s*(from numba\b|import numba\b)", path.read_bytes(), re.MULTILINE)]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.access(folder, os.W_OK)
    except OSError:
        return False


def cache_root() -> Path:
    """Folder that holds the versioned cache folders: ``$NUMBA_CACHE_DIR`` if set, else the package's
    ``__pycache__``, else ``~/.cache/app`` where the package is not writable (a system install)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    here = HERE / "__pycache__"
    return here if _writable(here) else Path.home() / ".cache" / "app"


def compile_pending() -> bool:
    """Whether no kernel has been compiled yet for this source (set by :func:`configure`)."""
    return fresh


def configure() -> Path | None:
    """Point numba's cache at this source version's folder; remove other versions' folders unused for an hour.
    Returns the folder, or None where no folder is writable (numba then compiles without caching)."""
    import numba

    root = cache_root()
    folder = root / f"{PREFIX}{source_hash()}"
    if not _writable(folder):
        log.debug("no writable numba cache folder at %s", folder)
        return None
    global fresh
    fresh = not any(folder.rglob("*.nbi"))
    numba.config.CACHE_DIR = str(folder)
    os.utime(folder)  # marks it in use for the clean-up below, run by other versions
    remove_stale(root, f"{PREFIX}*", STALE_AFTER_S, keep=folder)  # an hour's grace: an older source may still run
    return folder
