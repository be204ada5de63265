"""A single full 6-D IK call on the WidowX AI from Python, against ssik's prebuilt native WidowX 250s, in one sitting.

Ours: ``PoseIK(model, "ee_gripper_link", options=IKOptions(pos_tol=1e-5, rot_tol=1e-5)).solve_pose(pos, quat)`` (the
closed form's branches, the nearest polished; one compiled call), and ``model.inverse_kinematics`` (Genesis's
arguments, the general path) beside it. Targets: poses of random configurations within the joint limits.
ssik (not a dependency of the app: a venv of its own, ``pip install ssik``) runs in a subprocess right after, on
FK poses of its own arm: ``widowx250s_ik.solve(T)``, every branch; then its generic path on our WidowX AI URDF
(``ssik.Manipulator.from_urdf(..., base="base_link", ee="ee_gripper_link").solve(T)`` on FK poses of random
configurations within its limits, ``--generic-n`` of them), a solution counted where its own FK is within 1e-5.

    python scripts/bench_single_ik.py [--n 2000] [--ssik-python /path/to/venv/bin/python] [--generic-n 200]
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import time
from pathlib import Path

import numpy as np

from app import RobotModel
from app.collision.pairs import sample_configs
from app.ik.prepared import PoseIK
from app.ik.solver import IKOptions

log = logging.getLogger("bench_single_ik")
URDF = str(Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf")
LINK = "ee_gripper_link"
TOL = 1e-5
SSIK = """
import json, sys, time
import numpy as np
import ssik.prebuilt.widowx250s_ik as arm
rng = np.random.default_rng(0)
poses = [arm.fk(q) for q in rng.uniform(-1.5, 1.5, (int(sys.argv[1]), arm.DOF))]
for T in poses[:50]:
    arm.solve(T)
times, solved = [], 0
for T in poses:
    t0 = time.perf_counter(); sols = arm.solve(T); times.append(time.perf_counter() - t0); solved += bool(sols)
print(json.dumps({"median_us": 1e6 * float(np.median(times)), "solved": solved, "n": len(poses)}))
"""
SSIK_GENERIC = """
import json, sys, time
import numpy as np
import ssik
arm = ssik.Manipulator.from_urdf(sys.argv[2], base="base_link", ee="ee_gripper_link")
lo, hi = (np.array(x, dtype=float) for x in zip(*arm.joint_limits)) if arm.joint_limits else (-1.5, 1.5)
rng = np.random.default_rng(0)
qs = rng.uniform(lo, hi, (int(sys.argv[1]), arm.dof))
poses = [arm.fk(q) for q in qs]
arm.solve(poses[0])
times, solved = [], 0
for q, T in zip(qs, poses):
    t0 = time.perf_counter(); sols = arm.solve(T); times.append(time.perf_counter() - t0)
    solved += any(np.abs(np.asarray(arm.fk(s.q)) - T).max() < 1e-5 for s in sols)
print(json.dumps({"median_us": 1e6 * float(np.median(times)), "solved": solved, "n": len(poses),
                  "solver": str(arm.solver_name)}))
"""


def time_calls(call, targets) -> tuple[float, int]:
    """Median seconds of call(pos, quat) over the targets, and how many converged."""
    times, ok = [], 0
    for pos, quat in targets:
        t0 = time.perf_counter()
        converged = call(pos, quat)
        times.append(time.perf_counter() - t0)
        ok += bool(converged)
    return float(np.median(times)), ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--ssik-python", default=None, help="a Python with ssik installed (its own venv)")
    parser.add_argument("--generic-n", type=int, default=200, help="targets for ssik's path on our URDF (slow)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model = RobotModel.from_urdf(URDF)
    pos, quat = model.forward_kinematics(sample_configs(model, args.n, seed=1), [LINK])
    targets = list(zip(pos[:, 0], quat[:, 0]))
    solver = PoseIK(model, LINK, options=IKOptions(pos_tol=TOL, rot_tol=TOL))
    for p, q in targets[:50]:  # compiled and warm
        solver.solve_pose(p, q)
        model.inverse_kinematics(LINK, pos=p, quat=q, pos_tol=TOL, rot_tol=TOL)
    fast, ok_fast = time_calls(lambda p, q: solver.solve_pose(p, q)[1], targets)
    general, ok_general = time_calls(lambda p, q: model.inverse_kinematics(
        LINK, pos=p, quat=q, pos_tol=TOL, rot_tol=TOL, return_info=True).converged, targets)
    log.info("ours, WidowX AI, PoseIK.solve_pose: median %.1f us, %d/%d within %g m / %g rad", 1e6 * fast, ok_fast,
             len(targets), TOL, TOL)
    log.info("ours, WidowX AI, model.inverse_kinematics: median %.1f us, %d/%d", 1e6 * general, ok_general,
             len(targets))
    if args.ssik_python:
        out = subprocess.run([args.ssik_python, "-c", SSIK, str(args.n)], capture_output=True, text=True, check=True)
        peer = json.loads(out.stdout.strip().splitlines()[-1])
        log.info("ssik 8.2 prebuilt native WidowX 250s, every branch: median %.1f us, %d/%d solved",
                 peer["median_us"], peer["solved"], peer["n"])
        log.info("ratio ours (solve_pose) / ssik: %.2f", 1e6 * fast / peer["median_us"])
        out = subprocess.run([args.ssik_python, "-c", SSIK_GENERIC, str(args.generic_n), URDF], capture_output=True,
                             text=True, check=True)
        peer = json.loads(out.stdout.strip().splitlines()[-1])
        log.info("ssik 8.2 on our WidowX AI URDF (Manipulator.from_urdf, solver %s), every branch: median %.1f us, "
                 "%d/%d within 1e-5 of its own FK", peer["solver"], peer["median_us"], peer["solved"], peer["n"])


if __name__ == "__main__":
    main()
