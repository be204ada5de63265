"""Collision-free pose IK among a table and three boxes, refereed by PyBullet (#56's first goal).

Targets: full 6-D poses of random WidowX AI configurations at least 15 mm clear of every box by PyBullet's closest
points. Each is solved with ``inverse_kinematics(..., avoid_collisions=True, min_distance=0.01)`` in batches of 256.
The referee is PyBullet, on the URDF's own shapes:
- a target *has a clear solution* when one of its closed-form branches (all of them: a full pose of a 6-DOF arm
  has finitely many) keeps every world pair >= min_distance and every checked self pair >= 0;
- an answer is *falsely clear* when the IK calls it clear and PyBullet finds a world pair closer than
  min_distance - 1 mm or a self pair below -1 mm.
Prints the share of targets with a clear solution that were solved clear, the false clears, and the IK's queries
per second (the solve alone, medians over the batches).

    python scripts/bench_clutter_ik.py [--batches 4] [--batch 256] [--seed 3]
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pybullet as pb

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision.pairs import sample_configs
from app.ik.analytic import analytic_ik

log = logging.getLogger("bench_clutter_ik")
URDF = str(Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf")
LINK = "ee_gripper_link"
BOXES = (WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205)),
         WorldBox("box_a", (0.03, 0.03, 0.05), (0.35, 0.15, 0.05)),
         WorldBox("box_b", (0.04, 0.02, 0.08), (0.25, -0.2, 0.08)),
         WorldBox("box_c", (0.05, 0.05, 0.03), (0.45, -0.05, 0.03)))
MIN_DISTANCE = 0.01  # [m] world clearance asked of the IK
FALSE_SLACK = 0.001  # [m] a clear answer PyBullet finds this much inside the margin is a false clear


class Referee:
    """PyBullet's closest distances of a WidowX AI configuration: to the boxes (per box) and of the given self
    pairs, on the URDF's own collision shapes."""

    def __init__(self, model: RobotModel, self_pairs):
        self.cid = pb.connect(pb.DIRECT)
        self.body = pb.loadURDF(URDF, useFixedBase=True, physicsClientId=self.cid)
        joints = [pb.getJointInfo(self.body, j, physicsClientId=self.cid)
                  for j in range(pb.getNumJoints(self.body, physicsClientId=self.cid))]
        self.link_of = {i[12].decode(): i[0] for i in joints} | {"base_link": -1}
        self.dofs = [next(i[0] for i in joints if i[1].decode() == name) for name in model.dof_names]
        self.boxes = []
        for box in BOXES:
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(box.half), physicsClientId=self.cid)
            self.boxes.append(pb.createMultiBody(0, shape, -1, list(box.pos), physicsClientId=self.cid))
        self.self_pairs = [(self.link_of[a], self.link_of[b]) for a, b in self_pairs]
        self.moving = [self.link_of[name] for name, moves in zip(model.link_names, model.movable_links)
                       if moves and name in self.link_of]  # the world pairs the IK checks: links that joints move

    def distances(self, q: np.ndarray) -> tuple[float, float]:
        """(closest world distance of a moving link, closest self-pair distance) [m] at q (n_dofs,), each capped at
        0.05."""
        for j, value in zip(self.dofs, q):
            pb.resetJointState(self.body, j, value, physicsClientId=self.cid)
        world = min((p[8] for b in self.boxes for link in self.moving for p in
                     pb.getClosestPoints(self.body, b, 0.05, link, -1, physicsClientId=self.cid)), default=0.05)
        own = min((p[8] for a, b in self.self_pairs for p in
                   pb.getClosestPoints(self.body, self.body, 0.05, a, b, physicsClientId=self.cid)), default=0.05)
        return world, own

    def close(self) -> None:
        pb.disconnect(self.cid)


def targets(model: RobotModel, referee: Referee, n: int, seed: int) -> np.ndarray:
    """n configurations whose every link is >= 15 mm from each of the three boxes (not the table) by PyBullet."""
    found, rng_seed = [], seed
    while len(found) < n:
        for q in sample_configs(model, 4 * n, seed=rng_seed):
            for j, value in zip(referee.dofs, q):
                pb.resetJointState(referee.body, j, value, physicsClientId=referee.cid)
            if all(not pb.getClosestPoints(referee.body, b, 0.015, link, -1, physicsClientId=referee.cid)
                   for b in referee.boxes[1:] for link in referee.moving):
                found.append(q)
                if len(found) == n:
                    break
        rng_seed += 1
    return np.array(found)


def has_clear_branch(model, referee, pos, quat, q_rest) -> np.ndarray:
    """Per target, whether any closed-form branch is clear by the referee (world >= MIN_DISTANCE, self >= 0)."""
    q_all, valid = analytic_ik(model, LINK, pos, quat, q_rest=q_rest)
    out = np.zeros(len(pos), dtype=bool)
    for i in range(len(pos)):
        for c in np.flatnonzero(valid[i]):
            q = np.array(q_rest, dtype=float)
            q[: q_all.shape[2]] = q_all[i, c]
            world, own = referee.distances(q)
            if world >= MIN_DISTANCE and own >= 0.0:
                out[i] = True
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)  # the IK's summary of misses: counted here instead
    model = RobotModel.from_urdf(URDF)
    cm = collision_model(model, World(boxes=BOXES))
    referee = Referee(model, [p for p, kind in zip(cm.pair_names, cm.pair_kinds) if kind == "self"])
    q_targets = targets(model, referee, args.batches * args.batch, args.seed)
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q_targets, [LINK]))
    solve = lambda sl: model.inverse_kinematics(LINK, pos=pos[sl], quat=quat[sl], avoid_collisions=True,
                                                min_distance=MIN_DISTANCE, collision=cm, return_info=True)
    solve(slice(0, args.batch))  # compiled and warm
    results, seconds = [], []
    for k in range(args.batches):
        sl = slice(k * args.batch, (k + 1) * args.batch)
        t0 = time.perf_counter()
        results.append(solve(sl))
        seconds.append(time.perf_counter() - t0)
    q = np.concatenate([r.q for r in results])
    said_clear = np.concatenate([r.collision_free & r.converged for r in results])
    clear_exists = has_clear_branch(model, referee, pos, quat, (model.q_lower + model.q_upper) / 2)  # the IK's rest
    truth = np.array([referee.distances(qi) for qi in q])
    false_clear = said_clear & ((truth[:, 0] < MIN_DISTANCE - FALSE_SLACK) | (truth[:, 1] < -FALSE_SLACK))
    referee.close()
    n = len(q)
    log.info("%d targets, %d with a clear branch by PyBullet: solved clear %d = %.2f %%", n, clear_exists.sum(),
             (said_clear & clear_exists).sum(), 100 * (said_clear & clear_exists).sum() / max(clear_exists.sum(), 1))
    log.info("said clear without a clear branch by PyBullet: %d; false clears (PyBullet: world < %.0f mm or self "
             "< -%.0f mm): %d", (said_clear & ~clear_exists).sum(), 1e3 * (MIN_DISTANCE - FALSE_SLACK),
             1e3 * FALSE_SLACK, false_clear.sum())
    missed = np.flatnonzero(clear_exists & ~said_clear)
    if len(missed):
        log.info("missed (a clear branch exists, none found): %d, e.g. targets %s", len(missed), missed[:5].tolist())
    log.info("queries/s: %.0f (median of %d batches of %d; %.1f ms a batch)", args.batch / np.median(seconds),
             args.batches, args.batch, 1e3 * np.median(seconds))


if __name__ == "__main__":
    main()
