"""FK + Jacobian speed of RobotModel beside PyBullet on the same configurations.

Usage: python scripts/bench_kinematics.py [--repeats 7]

Per configuration: FK of every link plus the end-effector Jacobian. PyBullet's side:
resetJointState for each DOF, getLinkStates for every link (forward kinematics
recomputed) and calculateJacobian at the end effector. Medians over repeats.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pybullet as pb

from app import RobotModel
from app.sim.urdf_loader import load_urdf

log = logging.getLogger("bench_kinematics")
URDF = Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf"
EE = "ee_gripper_link"


def ours(model: RobotModel, q: np.ndarray) -> None:
    R, p = model.link_frames(q)
    model.jacobian_from_frames(R, p, model.link_index(EE))


def pybullet_side(client: int, body, model: RobotModel, qs: np.ndarray) -> None:
    joints = [body.joint_index[n] for n in model.dof_names]
    links = sorted(i for i in body.link_index.values() if i >= 0)
    ee = body.link_index[EE]
    zeros = [0.0] * model.n_dofs
    order = np.argsort(joints)
    for q in qs:
        for j, v in zip(joints, q):
            pb.resetJointState(body.body_id, j, v, physicsClientId=client)
        pb.getLinkStates(body.body_id, links, computeForwardKinematics=True, physicsClientId=client)
        pb.calculateJacobian(body.body_id, ee, [0.0, 0.0, 0.0], q[order].tolist(), zeros, zeros, physicsClientId=client)


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model = RobotModel.from_urdf(str(URDF))
    client = pb.connect(pb.DIRECT)
    body = load_urdf(client, str(URDF))
    rng = np.random.default_rng(0)
    ours(model, model.mid_config())  # compile / load the cached kernels
    log.info("%-8s %14s %14s %8s", "batch", "ours [us/cfg]", "pybullet", "ratio")
    for batch in (1, 4096):
        qs = rng.uniform(model.q_lower, model.q_upper, (batch, model.n_dofs))
        if batch == 1:
            n_calls = 2000
            t_ours = median_time(lambda: [ours(model, qs[0]) for _ in range(n_calls)], args.repeats) / n_calls
            t_pb = median_time(lambda: [pybullet_side(client, body, model, qs) for _ in range(n_calls)], args.repeats) / n_calls
        else:
            t_ours = median_time(lambda: ours(model, qs), args.repeats) / batch
            t_pb = median_time(lambda: pybullet_side(client, body, model, qs), args.repeats) / batch
        log.info("%-8d %14.2f %14.2f %7.1fx", batch, t_ours * 1e6, t_pb * 1e6, t_pb / t_ours)
    pb.disconnect(client)


if __name__ == "__main__":
    main()
