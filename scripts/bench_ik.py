"""Pose-IK benchmark in the protocol of TRAC-IK's published table, beside PyBullet's IK.

Usage: python scripts/bench_ik.py [--n 1000] [--robots widowx panda kuka]

Targets: random joint configurations uniform within the limits, FK gives a reachable full
6-D target; every query starts from the mid-point of the limits. Success: the returned q is
within the limits and its FK is within 1e-5 m and 1e-5 rad (also shown: our defaults,
1e-4 m / 1e-3 rad). Times per target: one call per target (mean / median / p99) and the
same targets in batches of 1024, and through a prepared PoseIK solver reused across calls (a control
loop's usage); for the WidowX AI also without closed-form seeding, and the
closed form alone (all branches) at batch 1 and 4096. PyBullet: calculateInverseKinematics, one call per target,
100 iterations, joints reset to the same mid-point first.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pybullet as pb
import pybullet_data

from app import RobotModel
from app.ik.analytic import analytic_ik, certify
from app.ik.prepared import PoseIK
from app.ik.solver import IKOptions
from app.kinematics.rotations import quat_conjugate, quat_log, quat_multiply, wxyz_to_xyzw
from app.sim.urdf_loader import load_urdf

log = logging.getLogger("bench_ik")
ROOT = Path(__file__).resolve().parents[1]
ROBOTS = {
    "widowx": (ROOT / "assets" / "urdf" / "widowx_ai.urdf", "ee_gripper_link"),
    "panda": (Path(pybullet_data.getDataPath()) / "franka_panda" / "panda.urdf", "panda_hand"),
    "kuka": (Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf", "lbr_iiwa_link_7"),
}
STRICT = dict(pos_tol=1e-5, rot_tol=1e-5)


def success(model: RobotModel, link: str, q: np.ndarray, pos: np.ndarray, quat: np.ndarray, tol: dict) -> np.ndarray:
    """Within limits and FK within tolerance, judged here rather than trusted from the solver. Shape (n,)."""
    pos_fk, quat_fk = model.forward_kinematics(q, [link])
    pos_err = np.linalg.norm(pos_fk[:, 0] - pos, axis=-1)
    rot_err = np.linalg.norm(quat_log(quat_multiply(quat_fk[:, 0], quat_conjugate(quat))), axis=-1)
    in_limits = np.all((q >= model.q_lower - 1e-12) & (q <= model.q_upper + 1e-12), axis=-1)
    return in_limits & (pos_err <= tol["pos_tol"]) & (rot_err <= tol["rot_tol"])


def timed_singles(solve, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Run solve(i) for each target; returns (q (n, n_dofs), seconds (n,))."""
    qs, times = [], []
    for i in range(n):
        t0 = time.perf_counter()
        qs.append(solve(i))
        times.append(time.perf_counter() - t0)
    return np.array(qs), np.array(times)


def pybullet_ik(client: int, body, model: RobotModel, link: str, pos: np.ndarray, quat: np.ndarray):
    joints = sorted(body.joint_index.values())
    names = sorted(body.joint_index, key=body.joint_index.get)
    lo, hi = model.q_lower, model.q_upper
    order = [model.dof_names.index(n) for n in names]
    mid = model.mid_config()
    back = [names.index(n) for n in model.dof_names]

    def solve(i):
        for j, k in zip(joints, order):
            pb.resetJointState(body.body_id, j, mid[k], physicsClientId=client)
        q = pb.calculateInverseKinematics(
            body.body_id, body.link_index[link], pos[i].tolist(), wxyz_to_xyzw(quat[i]).tolist(),
            lowerLimits=lo[order].tolist(), upperLimits=hi[order].tolist(), jointRanges=(hi - lo)[order].tolist(),
            restPoses=mid[order].tolist(), maxNumIterations=100, residualThreshold=1e-5, physicsClientId=client)
        return np.array(q)[back]

    return timed_singles(solve, len(pos))


def row(name: str, ok_strict, ok_default, times) -> str:
    t = np.asarray(times) * 1e3
    return (f"  {name:<22} {100 * np.mean(ok_strict):8.2f} % {100 * np.mean(ok_default):8.2f} %"
            f" {t.mean():9.3f} {np.median(t):9.3f} {np.percentile(t, 99):9.3f}")


def bench_robot(name: str, n: int, client: int, extra_rows=None) -> None:
    path, link = ROBOTS[name]
    model = RobotModel.from_urdf(str(path))
    rng = np.random.default_rng(0)
    q_true = rng.uniform(model.q_lower, model.q_upper, (n, model.n_dofs))
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q_true, [link]))
    default = dict(pos_tol=1e-4, rot_tol=1e-3)
    for k in (1, 16):  # load the compiled kernels, serial and threaded, outside the timings
        model.inverse_kinematics(link, pos[:k], quat[:k], **STRICT)
    log.info("%s (%d DOFs, %d targets)        success@1e-5  @default   mean[ms] median[ms]  p99[ms]",
             name, model.n_dofs, n)
    q, t = timed_singles(lambda i: model.inverse_kinematics(link, pos[i], quat[i], **STRICT), n)
    log.info(row("ours, one call each", success(model, link, q, pos, quat, STRICT),
                 success(model, link, q, pos, quat, default), t))
    batch_q, batch_t = [], []
    for s in range(0, n, 1024):
        t0 = time.perf_counter()
        batch_q.append(model.inverse_kinematics(link, pos[s:s + 1024], quat[s:s + 1024], **STRICT))
        batch_t += [(time.perf_counter() - t0) / len(batch_q[-1])] * len(batch_q[-1])
    q = np.concatenate(batch_q)
    log.info(row("ours, batches of 1024", success(model, link, q, pos, quat, STRICT),
                 success(model, link, q, pos, quat, default), batch_t))
    for label, solve in (extra_rows or {}).items():
        q, t = timed_singles(lambda i: solve(model, link, pos[i], quat[i]), n)  # noqa: B023
        log.info(row(label, success(model, link, q, pos, quat, STRICT), success(model, link, q, pos, quat, default), t))
    body = load_urdf(client, str(path))
    q, t = pybullet_ik(client, body, model, link, pos, quat)
    log.info(row("pybullet IK (100 it)", success(model, link, q, pos, quat, STRICT),
                 success(model, link, q, pos, quat, default), t))


def prepared_solver():
    """A solve function that builds one PoseIK per robot and reuses it (a control loop's usage)."""
    cache = {}

    def solve(model, link, pos, quat):
        if model not in cache:
            cache[model] = PoseIK(model, link, options=IKOptions(**STRICT))
            cache[model].solve(pos, quat)
        return cache[model].solve(pos, quat).q

    return solve


def bench_analytic(n: int) -> None:
    """All closed-form branches per target at batch 1 and batch 4096 (WidowX AI)."""
    model = RobotModel.from_urdf(str(ROBOTS["widowx"][0]))
    arm = certify(model, "ee_gripper_link")
    q = np.random.default_rng(2).uniform(model.q_lower, model.q_upper, (4096, model.n_dofs))
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q, ["ee_gripper_link"]))
    analytic_ik(model, "ee_gripper_link", pos[:2], quat[:2], arm=arm)
    single = timed_singles(lambda i: analytic_ik(model, "ee_gripper_link", pos[i], quat[i], arm=arm)[0], 500)[1]
    batch = []
    for _ in range(7):
        t0 = time.perf_counter()
        analytic_ik(model, "ee_gripper_link", pos, quat, arm=arm)
        batch.append(time.perf_counter() - t0)
    log.info("widowx closed form, all 8 branches: batch 1 median %.1f us/target; batch 4096 median %.2f ms "
             "(%.2f us/target)", np.median(single) * 1e6, np.median(batch) * 1e3, np.median(batch) / 4096 * 1e6)


def bench_fingertips(n: int) -> None:
    model = RobotModel.from_urdf(str(ROBOTS["widowx"][0]))
    links = ["left_fingertip", "right_fingertip"]
    q_true = np.random.default_rng(1).uniform(model.q_lower, model.q_upper, (n, model.n_dofs))
    pos, quat = model.forward_kinematics(q_true, links)
    kwargs = dict(rot_mask=(False, False, True), return_info=True, **STRICT)
    model.inverse_kinematics_multilink(links, [pos[:16, 0], pos[:16, 1]], [quat[:16, 0], quat[:16, 1]], **kwargs)
    t0 = time.perf_counter()
    info = model.inverse_kinematics_multilink(links, [pos[:, 0], pos[:, 1]], [quat[:, 0], quat[:, 1]], **kwargs)
    dt = (time.perf_counter() - t0) / n
    log.info("widowx fingertips (multi-link, rot_mask z, batched): success@1e-5 %.2f %%, %.3f ms/target",
             100 * info.converged.mean(), dt * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="targets per robot (TRAC-IK used 10000)")
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)  # failures are counted here, not logged per call
    client = pb.connect(pb.DIRECT)
    for name in args.robots:
        extra = {"ours, prepared PoseIK": prepared_solver()}
        if name == "widowx":
            extra["ours, no analytic seed"] = lambda model, link, p, q: model.inverse_kinematics(
                link, p, q, analytic_seed=False, **STRICT)
        bench_robot(name, args.n, client, extra)
    bench_analytic(args.n)
    bench_fingertips(args.n)
    pb.disconnect(client)


if __name__ == "__main__":
    main()
