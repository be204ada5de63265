"""Regenerate tests/golden/*.json from short headless runs of every shipped config.

Usage: python scripts/regen_golden.py [CONFIG ...]

Run it only after reviewing why a golden test failed: the new files become the reference.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the golden runs are test support (tests/), not the product

from tests.golden_runs import final_poses  # noqa: E402

log = logging.getLogger("regen_golden")


def main(argv: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    configs = [Path(a) for a in argv] or sorted((ROOT / "configs").glob("*.yaml"))
    out = ROOT / "tests" / "golden"
    out.mkdir(parents=True, exist_ok=True)
    for config in configs:
        poses = final_poses(config)
        path = out / f"{config.stem}.json"
        path.write_text(json.dumps(poses, indent=1) + "\n")
        log.info("wrote %s", path.relative_to(ROOT))


if __name__ == "__main__":
    main(sys.argv[1:])
