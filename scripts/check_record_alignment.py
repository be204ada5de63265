"""How far app.record's observations are from what the joint-action environment gives when the dataset's actions are
fed back from each episode's recorded scene: the worst arm-joint gap per episode, and how many succeed again.

    python scripts/check_record_alignment.py --episodes 4 --out /tmp/rec4
"""

from __future__ import annotations

import argparse
import logging
import shutil

import numpy as np

from app.config.loader import load_run_config
from app.dataset import load_dataset
from app.envs import make_vec_env
from app.record import main as record
from app.recording.episode_scenes import read_scenes

log = logging.getLogger("check_record_alignment")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="configs/pick_place.yaml")
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--out", required=True, help="a scratch folder (replaced)")
    args = p.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    record([args.config, "--episodes", str(args.episodes), "--out", args.out])
    logging.basicConfig(level=logging.INFO, format="%(message)s", force=True)
    run, data = load_run_config(args.config), load_dataset(args.out)
    scenes, n = read_scenes(args.out, run), len(data.episodes)
    env = make_vec_env(run, n, obs_type="state", action_mode="joint")
    obs, _ = env.reset(seed=0, options={"scenes": [scenes[k] for k in range(n)]})
    worst, ok, done = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool)
    for t in range(max(len(e.state) for e in data.episodes)):
        for e, ep in enumerate(data.episodes):
            if t < len(ep.state) and not done[e]:
                worst[e] = max(worst[e], np.abs(obs["agent_pos"][e, :6] - ep.state[t, :6]).max())
        obs, _, term, trunc, _ = env.step(np.stack([ep.action[min(t, len(ep.action) - 1)] for ep in data.episodes]))
        ok |= term & ~done
        done |= term | trunc
    env.close()
    log.info("worst arm-joint gap per episode [rad]: %s; %d of %d succeed again", np.round(worst, 4).tolist(),
             ok.sum(), n)


if __name__ == "__main__":
    main()
