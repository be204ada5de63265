"""Collision-free IK of both Stationary AI arms reaching into one bin, refereed by PyBullet (#56's two-arm goal).

The world: a table and a bin between the arms (a floor plus four walls 10 cm high, 30 x 30 cm inside). Targets: both
grippers' full 6-D poses from configurations whose grippers are inside the bin, every moving link at least 15 mm from
the table and the walls and the two arms at least 15 mm apart by PyBullet's closest points, and no checked pair of one
arm in contact. So every target pair has a clear solution: the configuration it was made from. Each batch is solved
with ``inverse_kinematics_multilink(..., avoid_collisions=True, min_distance=0.01, arm_min_distance=0.01)``.

PyBullet is the referee on the URDF's own shapes: an answer is *falsely clear* when the IK calls it clear and PyBullet
finds a world or arm pair closer than 10 mm - 1 mm or a self pair below -1 mm. Prints the share solved clear, the false
clears and the queries (target pairs) per second of the solve alone (median over the batches).

    python scripts/bench_bin_ik_arms.py [--batches 4] [--batch 256] [--seed 3] [--repeats 2]
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
from app.sim.urdf_loader import load_urdf

log = logging.getLogger("bench_bin_ik_arms")
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
URDF = REFERENCE / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
LINKS = ["follower_left_ee_gripper_link", "follower_right_ee_gripper_link"]
BIN_CENTRE, BIN_HALF, WALL, HEIGHT = (0.15, 0.0), 0.15, 0.005, 0.10  # [m] inside half-width, wall half-thickness
BOXES = (WorldBox("table", (0.6, 0.8, 0.02), (0.1, 0.0, -0.02)),
         WorldBox("wall_front", (WALL, BIN_HALF + 2 * WALL, HEIGHT / 2), (0.15 + BIN_HALF + WALL, 0.0, HEIGHT / 2)),
         WorldBox("wall_back", (WALL, BIN_HALF + 2 * WALL, HEIGHT / 2), (0.15 - BIN_HALF - WALL, 0.0, HEIGHT / 2)),
         WorldBox("wall_left", (BIN_HALF, WALL, HEIGHT / 2), (0.15, BIN_HALF + WALL, HEIGHT / 2)),
         WorldBox("wall_right", (BIN_HALF, WALL, HEIGHT / 2), (0.15, -BIN_HALF - WALL, HEIGHT / 2)))
MIN_DISTANCE = 0.01  # [m] world and arm clearance asked of the IK
SOURCE_CLEARANCE = 0.015  # [m] the targets' own configurations keep this from the world and between the arms
FALSE_SLACK = 0.001  # [m]


class Referee:
    """PyBullet's closest distances on the Stationary AI's own shapes: world, between the arms, and the self pairs."""

    def __init__(self, model: RobotModel, cm):
        self.cid = pb.connect(pb.DIRECT)
        body = load_urdf(self.cid, str(URDF), package_dirs=[str(REFERENCE)])
        self.body, self.link_of = body.body_id, body.link_index
        self.dofs = [body.joint_index[name] for name in model.dof_names]
        self.boxes = [pb.createMultiBody(0, pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(b.half),
                                                                    physicsClientId=self.cid), -1, list(b.pos),
                                         physicsClientId=self.cid) for b in BOXES]
        self.moving = [self.link_of[name] for name, moves in zip(model.link_names, model.movable_links)
                       if moves and name in self.link_of]
        robot_pairs = [(p, k) for p, k in zip(cm.pair_names, cm.pair_kinds) if k != "world"]
        self.pairs = [(self.link_of[a], self.link_of[b], k) for (a, b), k in robot_pairs]

    def set(self, q: np.ndarray) -> None:
        for j, value in zip(self.dofs, q):
            pb.resetJointState(self.body, j, float(value), physicsClientId=self.cid)

    def world(self, links=None, cap: float = 0.05) -> float:
        """The closest world distance of the given moving links (default all) [m], capped at ``cap``."""
        return min((p[8] for b in self.boxes for link in (links or self.moving) for p in
                    pb.getClosestPoints(self.body, b, cap, link, -1, physicsClientId=self.cid)), default=cap)

    def robot(self, kind: str, cap: float = 0.05) -> float:
        """The closest distance of the checked robot pairs of ``kind`` (self or arms) [m], capped at ``cap``."""
        return min((p[8] for a, b, k in self.pairs if k == kind for p in
                    pb.getClosestPoints(self.body, self.body, cap, a, b, physicsClientId=self.cid)), default=cap)

    def close(self) -> None:
        pb.disconnect(self.cid)


def arm_candidates(model: RobotModel, referee: Referee, side: int, n: int, seed: int) -> np.ndarray:
    """n configurations of one arm (its six joints; the other arm and the fingers at mid, where the IK keeps them) with
    its gripper inside the bin, clear of the world by SOURCE_CLEARANCE and free of own contacts by PyBullet."""
    prefix = ("follower_left_", "follower_right_")[side]
    own = [i for i, name in enumerate(model.dof_names) if name.startswith(prefix + "joint_")]  # fingers stay at mid
    links = [referee.link_of[name] for name in model.link_names if name.startswith(prefix) and name in referee.link_of
             and referee.link_of[name] in referee.moving]
    found, draw = [], seed
    while len(found) < n:
        q = np.broadcast_to(model.mid_config(), (50_000, model.n_dofs)).copy()
        q[:, own] = sample_configs(model, 50_000, seed=draw)[:, own]
        draw += 1
        p = model.forward_kinematics(q, [LINKS[side]])[0][:, 0]
        inside = (np.abs(p[:, :2] - BIN_CENTRE).max(axis=1) < BIN_HALF - 0.02) & (p[:, 2] > 0.03) & (p[:, 2] < 0.12)
        for qi in q[inside]:
            referee.set(qi)
            if referee.world(links, SOURCE_CLEARANCE) >= SOURCE_CLEARANCE and referee.robot("self", 0.0) >= 0.0:
                found.append(qi)
                if len(found) == n:
                    break
    return np.array(found)


def target_configs(model: RobotModel, referee: Referee, n: int, seed: int) -> np.ndarray:
    """n two-arm configurations: one arm's candidates paired with the other's, kept where the arms stay
    SOURCE_CLEARANCE apart by PyBullet."""
    rng = np.random.default_rng(seed)
    left, right = (arm_candidates(model, referee, side, n, seed + 100 * side) for side in (0, 1))
    right_dofs = [i for i, name in enumerate(model.dof_names) if name.startswith("follower_right_joint_")]
    out = []
    while len(out) < n:
        q = left[rng.integers(len(left))].copy()
        q[right_dofs] = right[rng.integers(len(right))][right_dofs]
        referee.set(q)
        if referee.robot("arms", SOURCE_CLEARANCE) >= SOURCE_CLEARANCE:
            out.append(q)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2, help="times each batch is solved (timed each time)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)  # the IK's summary of misses: counted here instead
    model = RobotModel.from_urdf(str(URDF), package_dirs=[str(REFERENCE)])
    cm = collision_model(model, World(boxes=BOXES))
    referee = Referee(model, cm)
    q_src = target_configs(model, referee, args.batches * args.batch, args.seed)
    pos, quat = model.forward_kinematics(q_src, LINKS)
    solve = lambda sl: model.inverse_kinematics_multilink(
        LINKS, [pos[sl, 0], pos[sl, 1]], [quat[sl, 0], quat[sl, 1]], avoid_collisions=True,
        min_distance=MIN_DISTANCE, arm_min_distance=MIN_DISTANCE, collision=cm, return_info=True)
    solve(slice(0, args.batch))  # compiled and warm
    results, seconds = [], []
    for _ in range(args.repeats):  # the same answers each time (seeded): the last pass's are judged
        results = []
        for k in range(args.batches):
            sl = slice(k * args.batch, (k + 1) * args.batch)
            t0 = time.perf_counter()
            results.append(solve(sl))
            seconds.append(time.perf_counter() - t0)
    q = np.concatenate([r.q for r in results])
    said = np.concatenate([r.collision_free & r.converged for r in results])
    false_clear = np.zeros(len(q), dtype=bool)
    for i in np.flatnonzero(said):
        referee.set(q[i])
        false_clear[i] = (referee.world() < MIN_DISTANCE - FALSE_SLACK or referee.robot("arms") < MIN_DISTANCE -
                          FALSE_SLACK or referee.robot("self") < -FALSE_SLACK)
    referee.close()
    log.info("%d target pairs (each with a clear solution by construction): solved clear %d = %.2f %%", len(q),
             said.sum(), 100 * said.mean())
    log.info("false clears (PyBullet: world or arms < %.0f mm, self < -%.0f mm): %d", 1e3 * (MIN_DISTANCE -
             FALSE_SLACK), 1e3 * FALSE_SLACK, false_clear.sum())
    missed = np.flatnonzero(~said)
    if len(missed):
        first = next(r for r in results for c in r.closest if c is not None)
        log.info("missed: %d, e.g. targets %s; a closest pair: %s", len(missed), missed[:5].tolist(),
                 next(c for c in first.closest if c is not None))
    log.info("target pairs/s: %.0f (median of %d timings: %d batches of %d, each solved %d times; %.1f ms a batch)",
             args.batch / np.median(seconds), len(seconds), args.batches, args.batch, args.repeats,
             1e3 * np.median(seconds))


if __name__ == "__main__":
    main()
