"""Compile the numba kernels the suite needs before its workers start, in two processes at once.

A fresh checkout has no compiled kernels (app/kernels/cache.py): without this, each pytest-xdist worker and each
command line a test starts in the first minute compiles the same kernels itself (~40-60 s of CPU each on this
2-core machine). ``tests/conftest.py`` runs the two groups below side by side when the cache is cold; each
group runs the app's own command lines for a few control ticks, so it compiles what a real run compiles.

Usage: python -m tests.warm_kernels GROUP OUT_DIR   (GROUP: qp or ik)
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {
    "qp": ["qp_obstacle", "bimanual_qp", "handover"],  # the QP, its collision rows (spheres and PyBullet), two arms
    "ik": ["batched_ik", "pick_place", "single_ik"],  # batched LM IK, closed form seeds, gripper and objects
}


def warm(group: str, out: Path) -> None:
    """Run ``group``'s configs for 0.05 s each (no video), outputs under ``out``."""
    from app.run import main

    for name in GROUPS[group]:
        code = main([str(ROOT / "configs" / f"{name}.yaml"), "--duration", "0.05", "--no-video",
                     "--out", str(out / name)])
        if code != 0:
            raise SystemExit(f"{name}: exit code {code}")


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    warm(sys.argv[1], Path(sys.argv[2]))
