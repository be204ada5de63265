"""app.kernels.cache: numba's cache folder follows every source file of the package, so an edit to a
called kernel in another file cannot leave a stale compiled caller behind."""

import os
import time

import numba

from app.kernels import cache as kernel_cache


def _package(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "ik").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ik" / "_linalg.py").write_text("from numba import njit\n\n@njit\ndef solve(): return 1\n")
    (pkg / "ik" / "_lm.py").write_text("from numba import njit\nfrom pkg.ik._linalg import solve\n")
    (pkg / "report.py").write_text("def summary(): return 0\n")
    return pkg


def test_source_hash_changes_when_a_callee_in_another_file_changes(tmp_path):
    pkg = _package(tmp_path)
    before = kernel_cache.source_hash(pkg)
    assert kernel_cache.source_hash(pkg) == before
    (pkg / "ik" / "_linalg.py").write_text("from numba import njit\n\n@njit\ndef solve(): return 2\n")
    assert kernel_cache.source_hash(pkg) != before


def test_source_hash_ignores_files_without_kernels(tmp_path):
    pkg = _package(tmp_path)
    before = kernel_cache.source_hash(pkg)
    (pkg / "report.py").write_text("def summary(): return 1\n")
    assert kernel_cache.source_hash(pkg) == before


def test_source_hash_ignores_pycache_contents(tmp_path):
    pkg = _package(tmp_path)
    before = kernel_cache.source_hash(pkg)
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "stray.py").write_text("x = 1\n")
    assert kernel_cache.source_hash(pkg) == before


def test_configure_uses_numba_cache_dir_and_removes_only_stale_versions(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    stale, recent, other = tmp_path / "numba-stale", tmp_path / "numba-recent", tmp_path / "keep-me"
    for folder in (stale, recent, other):
        folder.mkdir()
    old = time.time() - 2 * kernel_cache.STALE_AFTER_S
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    previous = numba.config.CACHE_DIR
    try:
        folder = kernel_cache.configure()
        assert folder == tmp_path / f"numba-{kernel_cache.source_hash()}"
        assert numba.config.CACHE_DIR == str(folder) and folder.is_dir()
    finally:
        numba.config.CACHE_DIR = previous
    assert not stale.exists() and recent.is_dir() and other.is_dir()


def test_importing_app_points_numba_at_this_source_versions_folder():
    assert os.path.basename(numba.config.CACHE_DIR) == f"numba-{kernel_cache.source_hash()}"


def test_the_default_hash_covers_the_kernels_of_every_folder_of_the_app():
    """The cache folder must follow app/ik/_lm.py and app/collision/ (not app/kernels/ alone, where this module
    lives): with only its own folder hashed, edited kernels ran from a stale cache."""
    names = {str(p.relative_to(kernel_cache.PACKAGE)) for p in kernel_cache.kernel_sources()}
    assert {"ik/_lm.py", "collision/_box_box.py", "collision/_distance_kernels.py", "kinematics/_fk_kernels.py"} <= names
