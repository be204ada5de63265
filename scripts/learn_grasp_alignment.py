"""How well a trained end-effector policy lines its gripper up with the cube when it grasps, in closed loop: each
episode (seeds from ``--seed``) is played in the environment the policy was trained for, and at the first step
whose action closes the gripper the script notes the angle between the gripper's closing direction and the
nearest cube face normal (0..45 deg: a cube turns into itself every quarter turn) and the cube's distance from
the gripper's axis in the table's plane. Needs the learn extra (lerobot, torch).

    python scripts/learn_grasp_alignment.py RUN/train/checkpoints/030000 --episodes 20 --seed 1000000
"""

from __future__ import annotations

import argparse
import logging

import numpy as np

from app.config.loader import load_run_config
from app.envs import make_vec_env
from app.evaluation.expert import ExpertPolicy
from app.evaluation.lerobot_policy import LeRobotPolicy
from app.kinematics.rotations import quat_to_matrix

log = logging.getLogger("learn_grasp_alignment")


def _heading(direction: np.ndarray) -> float:
    return float(np.degrees(np.arctan2(direction[1], direction[0])))


def _episode(env, policy, seed: int, max_steps: int) -> tuple[float, float] | None:
    """(misalignment [deg], xy offset [mm]) at the first closing action, None if the gripper never closed."""
    obs, _ = env.reset(seed=[seed])
    policy.reset()
    for _ in range(max_steps):
        action = np.asarray(policy.select_action(obs))
        if action[0, 7] < 0.5 * float(env.action_space.high[0, 7]):
            cube = obs["environment_state"][0]
            closing = quat_to_matrix(action[0, 3:7].astype(float))[:, 1]
            face = quat_to_matrix(cube[3:7].astype(float))[:, 0]
            angle = (_heading(closing) - _heading(face)) % 90.0
            return min(angle, 90.0 - angle), 1e3 * float(np.linalg.norm(action[0, :2] - cube[:2]))
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated[0] or truncated[0]:
            return None
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy", help="a LeRobot policy folder trained with --action-mode ee_pose, or 'expert' (the "
                                  "scripted expert, least-turn grasps: the reference)")
    p.add_argument("--config", default="configs/pick_place.yaml")
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--seed", type=int, default=1_000_000)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    expert = args.policy == "expert"
    run = load_run_config(args.config, sets={"task.grasp_choice": "least_turn"} if expert else None)
    env = make_vec_env(run, 1, obs_type="state", action_mode="ee_pose")
    policy = ExpertPolicy(env) if expert else LeRobotPolicy(env, args.policy)
    found = [_episode(env, policy, args.seed + i, 400) for i in range(args.episodes)]
    env.close()
    closed = np.array([f for f in found if f is not None])
    if not len(closed):
        log.info("the gripper never closed in %d episodes", args.episodes)
        return
    log.info("%d of %d episodes closed the gripper; misalignment to the nearest face [deg]: median %.1f, max %.1f, "
             "over 10 deg in %d; xy offset from the cube [mm]: median %.1f, max %.1f", len(closed), args.episodes,
             np.median(closed[:, 0]), closed[:, 0].max(), int((closed[:, 0] > 10).sum()), np.median(closed[:, 1]),
             closed[:, 1].max())


if __name__ == "__main__":
    main()
