"""Why collision-free pose IK among a table and three boxes misses targets (#56's 45.9 %): full 6-D targets from
random WidowX AI configurations at least 15 mm clear of every box (the issue's recipe, boxes only), solved with
``avoid_collisions=True, min_distance=0.01``; each miss classified by whether the target's own configuration passes
the call's own test (world pairs >= 10 mm, self pairs >= 0 on the link spheres), and the sphere model's self
distance of the failing ones compared with PyBullet's closest points on the same link pair.

    python scripts/check_clutter_ik.py [--targets 256] [--seed 3]
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pybullet as pb

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision.pairs import sample_configs

log = logging.getLogger("check_clutter_ik")
URDF = str(Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf")
BOXES = (WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205)),
         WorldBox("box_a", (0.03, 0.03, 0.05), (0.35, 0.15, 0.05)),
         WorldBox("box_b", (0.04, 0.02, 0.08), (0.25, -0.2, 0.08)),
         WorldBox("box_c", (0.05, 0.05, 0.03), (0.45, -0.05, 0.03)))


def exact_pair_distance(q_rows: np.ndarray, model, pairs: list[tuple[str, str]]) -> np.ndarray:
    """PyBullet's closest distance [m] of each row's link pair (the URDF's own collision shapes), 0.05 if beyond."""
    cid = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(URDF, useFixedBase=True, physicsClientId=cid)
        n = pb.getNumJoints(body, physicsClientId=cid)
        joints = [pb.getJointInfo(body, j, physicsClientId=cid) for j in range(n)]
        link_of = {info[12].decode(): info[0] for info in joints} | {"base_link": -1}
        dof_of = {info[1].decode(): info[0] for info in joints}
        out = []
        for q, (a, b) in zip(q_rows, pairs):
            for name, value in zip(model.dof_names, q):
                pb.resetJointState(body, dof_of[name], value, physicsClientId=cid)
            points = pb.getClosestPoints(body, body, 0.05, link_of[a], link_of[b], physicsClientId=cid)
            out.append(min((p[8] for p in points), default=0.05))
        return np.array(out)
    finally:
        pb.disconnect(cid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=256)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model = RobotModel.from_urdf(URDF)
    cm = collision_model(model, World(boxes=BOXES))
    q = sample_configs(model, 16 * args.targets, seed=args.seed)
    d, _ = cm.distances(q)
    names, world = cm.pair_names, np.asarray(cm.pair_kinds) == "world"
    boxes = np.array([any(b.name in n for b in BOXES[1:]) for n in names])
    sel = np.flatnonzero(d[:, boxes].min(axis=1) >= 0.015)[:args.targets]
    pos, quat = model.forward_kinematics(q[sel], ["ee_gripper_link"])
    logging.getLogger("app").setLevel(logging.ERROR)  # the IK's one-line summary of misses: counted below instead
    res = model.inverse_kinematics("ee_gripper_link", pos=pos[:, 0], quat=quat[:, 0], avoid_collisions=True,
                                   min_distance=0.01, collision=cm, return_info=True)
    solved = res.converged & res.collision_free
    own_clear = (d[sel][:, world].min(axis=1) >= 0.01) & (d[sel][:, ~world].min(axis=1) >= 0.0)
    log.info("%d targets box-clear by 15 mm: solved clear %.1f %%", len(sel), 100 * solved.mean())
    log.info("  own configuration passes the call's test: %d, solved clear %.1f %%", own_clear.sum(),
             100 * solved[own_clear].mean())
    log.info("  own configuration fails it: %d, solved clear %.1f %%", (~own_clear).sum(),
             100 * solved[~own_clear].mean())
    failing = sel[~own_clear]
    self_idx = np.flatnonzero(~world)
    worst = [self_idx[np.argmin(d[i, self_idx])] for i in failing]
    spheres = np.array([d[i, k] for i, k in zip(failing, worst)])
    exact = exact_pair_distance(q[failing], model, [names[k] for k in worst])
    log.info("  their closest self pair: spheres < 0 in %d, PyBullet < 0 in %d, PyBullet >= 0 where spheres < 0 "
             "in %d", (spheres < 0).sum(), (exact < 0).sum(), ((spheres < 0) & (exact >= 0)).sum())
    log.info("  pairs: %s", Counter(names[k] for k in worst).most_common(4))


if __name__ == "__main__":
    main()
