"""Dual-arm multi-link IK on the Stationary AI beside single-arm IK on one WidowX AI, in one sitting.

Usage: python scripts/bench_dual_arm_ik.py [--batch 256] [--batches 8] [--repeats 5]

Targets: random configurations uniform within the joint limits (one generator seed per robot), FK gives
reachable full-pose targets: both ``follower_*_ee_gripper_link`` frames of the Stationary AI (16 DOFs), the
``ee_gripper_link`` of one WidowX AI (assets/urdf/widowx_ai.urdf). Every query starts from the mid-point of
the limits. Calls: ``inverse_kinematics_multilink`` (both links, one call per batch) and
``inverse_kinematics`` (one link), pos_tol = rot_tol = 1e-5, the other options the defaults.

Success: the answer is within the joint limits and PyBullet's FK of it (the URDF loaded in a DIRECT client,
joints reset, getLinkState) is within 1e-5 m and 1e-5 rad of every target. Time: per target, the median over
the repeats of each batch's wall time divided by the batch size; the two robots alternate batch by batch.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pybullet as pb

from app import RobotModel
from app.kinematics.rotations import quat_conjugate, quat_log, quat_multiply, xyzw_to_wxyz
from app.sim.urdf_loader import load_urdf

log = logging.getLogger("bench_dual_arm_ik")
ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"
DUAL = REFERENCE / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
SINGLE = ROOT / "assets" / "urdf" / "widowx_ai.urdf"
DUAL_LINKS = ["follower_left_ee_gripper_link", "follower_right_ee_gripper_link"]
SINGLE_LINKS = ["ee_gripper_link"]
TOL = dict(pos_tol=1e-5, rot_tol=1e-5)


def random_configs(model: RobotModel, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    return rng.uniform(lo, hi, (n, model.n_dofs))


def pybullet_success(path: Path, model: RobotModel, links: list[str], q: np.ndarray, pos: np.ndarray,
                     quat: np.ndarray) -> np.ndarray:
    """Within limits and PyBullet's FK within 1e-5 m / 1e-5 rad of every link's target. Shapes: q (n, n_dofs),
    pos (n, k, 3), quat (n, k, 4) -> (n,)."""
    client = pb.connect(pb.DIRECT)
    try:
        body = load_urdf(client, str(path), package_dirs=[str(REFERENCE)])
        ok = np.all((q >= model.q_lower - 1e-12) & (q <= model.q_upper + 1e-12), axis=1)
        for i, qi in enumerate(q):
            for name, value in zip(model.dof_names, qi):
                pb.resetJointState(body.body_id, body.joint_index[name], float(value), physicsClientId=client)
            for k, link in enumerate(links):
                state = pb.getLinkState(body.body_id, body.link_index[link], computeForwardKinematics=True,
                                        physicsClientId=client)
                p_err = np.linalg.norm(np.array(state[4]) - pos[i, k])
                q_pb = xyzw_to_wxyz(np.array(state[5]))
                r_err = np.linalg.norm(quat_log(quat_multiply(q_pb, quat_conjugate(quat[i, k]))))
                ok[i] &= p_err <= TOL["pos_tol"] and r_err <= TOL["rot_tol"]
        return ok
    finally:
        pb.disconnect(client)


def solve(model: RobotModel, links: list[str], pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
    if len(links) == 1:
        return model.inverse_kinematics(links[0], pos[:, 0], quat[:, 0], **TOL, warn=False)
    return model.inverse_kinematics_multilink(links, list(pos.transpose(1, 0, 2)), list(quat.transpose(1, 0, 2)),
                                              **TOL, warn=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not DUAL.is_file():
        raise SystemExit(f"reference robot absent: {DUAL}")
    robots = {"Stationary AI, both arms": (DUAL, RobotModel.from_urdf(str(DUAL), package_dirs=[str(REFERENCE)]),
                                           DUAL_LINKS),
              "WidowX AI, one arm": (SINGLE, RobotModel.from_urdf(str(SINGLE)), SINGLE_LINKS)}
    n = args.batch * args.batches
    data = {}
    for seed, (name, (path, model, links)) in enumerate(robots.items()):
        pos, quat = model.forward_kinematics(random_configs(model, n, seed), links)
        solve(model, links, pos[:2], quat[:2])  # compiled (or loaded from the cache) before timing
        data[name] = (pos.reshape(args.batches, args.batch, len(links), 3),
                      quat.reshape(args.batches, args.batch, len(links), 4))
    per_target = {name: [] for name in robots}
    answers = {name: [None] * args.batches for name in robots}
    for _ in range(args.repeats):
        for b in range(args.batches):
            for name, (path, model, links) in robots.items():
                pos, quat = data[name][0][b], data[name][1][b]
                t0 = time.perf_counter()
                answers[name][b] = solve(model, links, pos, quat)
                per_target[name].append((time.perf_counter() - t0) / args.batch)
    med = {name: float(np.median(t)) for name, t in per_target.items()}
    for name, (path, model, links) in robots.items():
        q = np.concatenate(answers[name])
        ok = pybullet_success(path, model, links, q, data[name][0].reshape(n, len(links), 3),
                              data[name][1].reshape(n, len(links), 4))
        log.info("%-26s %d DOFs: %.4f ms per target (median, batches of %d), success %.2f %% of %d at 1e-5 "
                 "(PyBullet FK)", name, model.n_dofs, med[name] * 1e3, args.batch, 100.0 * ok.mean(), n)
    names = list(robots)
    log.info("ratio dual / single per target: %.2f", med[names[0]] / med[names[1]])


if __name__ == "__main__":
    main()
