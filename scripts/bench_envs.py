"""Speed of the Gymnasium environments (app.envs) and of ``app.eval`` beside ``app.record``.

Usage: python scripts/bench_envs.py [--parts state,camera,eval] [--num-envs 16] [--steps 240] [--repeats 3]
                                    [--episodes 50] [--workers 2]

- state: ``configs/pick_place.yaml``, ``--num-envs`` environments in one process (one world), ``obs_type=state``,
  stepped at the config's rate (its video fps: the rate app.record writes) for ``--steps`` steps after a reset,
  (a) ``joint`` actions (the start pose held, small seeded noise: physics and control, no policy cost) and
  (b) the scripted expert in the ``ee_pose`` mode (IK in the step). env-steps/s = num_envs x steps / wall s.
- camera: the same with one 224 x 224 camera per environment (``cam_high`` of
  ``configs/pick_place_cameras.yaml`` rendered at 224 x 224, ``obs_type=pixels_agent_pos``), joint actions.
- eval: wall time of ``python -m app.eval configs/pick_place.yaml --policy expert --episodes N --workers W``
  beside ``python -m app.record configs/pick_place.yaml --episodes N --cameras none --workers W`` (subprocesses, whole command).

Medians of ``--repeats`` (eval: of ``--eval-repeats``, default 1: each run is minutes). The figures are of this
machine at the time of the run; another process on the same cores lowers them (say so when quoting them).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from app.envs.registry import make_vec_env
from app.evaluation.expert import ExpertPolicy

ROOT = Path(__file__).resolve().parents[1]
PICK = ROOT / "configs" / "pick_place.yaml"
CAMERAS = ROOT / "configs" / "pick_place_cameras.yaml"
log = logging.getLogger("bench_envs")


def _rate(env, steps: int, act, seed: int) -> float:
    """env-steps per wall second over ``steps`` steps after a reset (the reset not timed)."""
    obs, _ = env.reset(seed=seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        obs, *_ = env.step(act(obs))
    return env.num_envs * steps / (time.perf_counter() - t0)


def _hold(env, seed: int):
    rng = np.random.default_rng(seed)
    low, high = env.single_action_space.low, env.single_action_space.high
    return lambda obs: np.clip(obs["agent_pos"] + rng.normal(0.0, 0.01, obs["agent_pos"].shape), low, high
                               ).astype(np.float32)


def _median_rate(make, act_of, steps: int, repeats: int) -> float:
    env = make()
    try:
        _rate(env, 5, act_of(env, 0), 0)  # first calls (kernels, renderer) not counted
        return statistics.median(_rate(env, steps, act_of(env, r), r) for r in range(repeats))
    finally:
        env.close()


def state(n: int, steps: int, repeats: int) -> None:
    joint = _median_rate(lambda: make_vec_env(PICK, n, obs_type="state", action_mode="joint"), _hold, steps, repeats)
    log.info("state, %d envs, joint actions: %.0f env-steps/s (median of %d x %d steps)", n, joint, repeats, steps)

    def expert(env, seed):
        policy = ExpertPolicy(env)
        return policy.select_action

    ee = _median_rate(lambda: make_vec_env(PICK, n, obs_type="state", action_mode="ee_pose"), expert, steps, repeats)
    log.info("state, %d envs, scripted expert (ee_pose, IK in the step): %.0f env-steps/s", n, ee)


def camera(n: int, steps: int, repeats: int) -> None:
    rate = _median_rate(lambda: make_vec_env(CAMERAS, n, obs_type="pixels_agent_pos", action_mode="joint",
                                             cameras=("cam_high",), image_size=(224, 224)), _hold, steps, repeats)
    log.info("one 224x224 camera per env, %d envs, joint actions: %.0f env-steps/s (median of %d x %d steps)",
             n, rate, repeats, steps)


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    log.info("  %s: %.1f s; %s", " ".join(cmd[2:4]), wall, (done.stderr.strip().splitlines() or [""])[-2][:160])
    return wall


def eval_beside_record(episodes: int, workers: int, repeats: int) -> None:
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        ev = [_wall([py, "-m", "app.eval", str(PICK), "--policy", "expert", "--episodes", str(episodes),
                     "--workers", str(workers), "--out", f"{tmp}/eval{r}"]) for r in range(repeats)]
        rec = [_wall([py, "-m", "app.record", str(PICK), "--episodes", str(episodes), "--cameras", "none",
                      "--workers", str(workers), "--out", f"{tmp}/rec{r}"]) for r in range(repeats)]
    log.info("%d scripted pick-and-place episodes, %d workers: app.eval %.1f s, app.record %.1f s (wall, median "
             "of %d)", episodes, workers, statistics.median(ev), statistics.median(rec), repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="state,camera,eval")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eval-repeats", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parts = set(args.parts.split(","))
    if "state" in parts:
        state(args.num_envs, args.steps, args.repeats)
    if "camera" in parts:
        camera(args.num_envs, args.steps, args.repeats)
    if "eval" in parts:
        eval_beside_record(args.episodes, args.workers, args.eval_repeats)


if __name__ == "__main__":
    main()
