"""Whether a long ``app.eval`` keeps its memory flat: runs the command as a child process and samples its resident
memory (RSS, the process and its children) every ``--every`` seconds; logs the RSS after the first wave, at the
end and its growth per 100 episodes over the second half, and writes the samples to ``--out``/memory.json.

    python scripts/eval_memory.py --episodes 1000 --out /tmp/eval_memory
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import psutil

log = logging.getLogger("eval_memory")


def _rss_mb(proc: psutil.Process) -> float:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:  # a child that ended between the listing and the reading
            pass
    return total / 2**20


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="configs/pick_place.yaml")
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "app.eval", args.config, "--policy", "expert", "--episodes", str(args.episodes),
           "--num-envs", str(args.num_envs), "--out", str(out / "eval")]
    t0, samples = time.perf_counter(), []
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    proc = psutil.Process(child.pid)
    while child.poll() is None:
        samples.append((time.perf_counter() - t0, _rss_mb(proc)))
        time.sleep(args.every)
    err = child.stderr.read()
    if child.returncode != 0:
        log.error("app.eval failed (%d): %s", child.returncode, err.strip().splitlines()[-1:])
        raise SystemExit(1)
    info = json.loads((out / "eval" / "eval_info.json").read_text())
    n = len(samples)
    rss = [m for _, m in samples]
    wall = samples[-1][0]
    half = [(t, m) for t, m in samples if t >= wall / 2]
    slope = (half[-1][1] - half[0][1]) / max(half[-1][0] - half[0][0], 1e-9)  # MB/s over the second half
    per_100 = slope * wall / args.episodes * 100
    (out / "memory.json").write_text(json.dumps({"command": cmd, "samples_s_mb": samples, "episodes": args.episodes,
                                                 "pc_success": info["aggregated"]["pc_success"]}, indent=1))
    log.info("%d episodes in %.0f s (%d samples): RSS %.0f MB at 10 %% of the run, %.0f MB at the end, max %.0f "
             "MB; second half: %+.2f MB per 100 episodes; success %.1f %%", args.episodes, wall, n,
             rss[n // 10], rss[-1], max(rss), per_100, info["aggregated"]["pc_success"])


if __name__ == "__main__":
    main()
