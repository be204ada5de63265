"""How far a trained ACT policy's end-effector target is from the demonstration's at the grasp, offline: each
demonstration's own observations fed in frame by frame (the policy's chunks executed as in an evaluation), the xy
error over the four frames before the gripper starts closing. Needs the learn extra (lerobot, torch).

    python scripts/learn_grasp_offline.py RUN/train/checkpoints/00030000/pretrained_model RUN/dataset --episodes 10
"""

from __future__ import annotations

import argparse
import logging

import numpy as np

from app.config.loader import load_run_config
from app.dataset import load_dataset
from app.envs import make_vec_env
from app.evaluation.lerobot_policy import LeRobotPolicy

log = logging.getLogger("learn_grasp_offline")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy")
    p.add_argument("dataset", help="an app.learn dataset of ee_pose actions")
    p.add_argument("--config", default="configs/pick_place.yaml")
    p.add_argument("--episodes", type=int, default=10, help="every 4th episode from 0, this many")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    env = make_vec_env(load_run_config(args.config), 1, obs_type="state", action_mode="ee_pose")
    policy, data, errors = LeRobotPolicy(env, args.policy), load_dataset(args.dataset), []
    for k in range(0, 4 * args.episodes, 4):
        ep = data.episodes[k]
        policy.reset()
        pred = np.stack([policy.select_action({"agent_pos": ep.state[t:t + 1].astype(np.float32),
                                               "environment_state": ep.environment_state[t:t + 1].astype(np.float32)})[0]
                         for t in range(len(ep.state))])
        g = int(np.flatnonzero(ep.action[:, 7] < ep.action[0, 7] - 0.005)[0])  # the first closing command
        errors.append(np.linalg.norm(pred[g - 3:g + 1, :2] - ep.action[g - 3:g + 1, :2], axis=1).max())
    env.close()
    log.info("xy error at the grasp frames [mm]: median %.1f, max %.1f over %d demonstrations",
             1e3 * np.median(errors), 1e3 * np.max(errors), len(errors))


if __name__ == "__main__":
    main()
