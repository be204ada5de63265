"""QP tick with one and with two frame tasks on the 16-DOF Stationary AI (two WidowX AI arms).

Usage: python scripts/bench_qp_tasks.py [--envs 16] [--ticks 240] [--repeats 5] [--radius 0.05] [--speed 2]

Robot: ../shared/reference/trossen_arm_description/urdf/stationary_ai.urdf on the numpy integrator robot
(no simulator: the tick is the controller's own work). Each environment starts at mid-range; the left end
effector circles its start (``--radius`` 5 cm, ``--speed`` 2 rad/s, orientation held, full pose) and, with two
tasks, the right one circles its own start the same way (a fast circle makes the joint box bind, and OSQP run); with one task the right arm is left to the posture. Control at
240 Hz with the QP controller's defaults (joint box with the acceleration window, posture).

Timed per tick: the QP controller's build (every environment's QP in one compiled call, the certified exact
solution where one exists) and solve (that solution, else the environment's warm OSQP workspace), divided by
the number of environments. The two variants alternate run by run in one sitting; medians of the ticks of
every run, and the fraction of QPs that needed OSQP.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

from app import RobotModel
from app.control.qp_controller import QPController, QPControllerConfig
from app.control.robot_protocol import IntegratorRobot
from app.ik.tasks import FrameTask
from app.kinematics.rotations import quat_to_matrix

log = logging.getLogger("bench_qp_tasks")
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
URDF = REFERENCE / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
LINKS = ("follower_left_ee_gripper_link", "follower_right_ee_gripper_link")
DT = 1.0 / 240.0


def run_once(model: RobotModel, n_tasks: int, n_envs: int, ticks: int, radius: float = 0.05,
             speed: float = 2.0) -> tuple[list[float], float]:
    """One control episode; returns (tick times per environment [s], fraction of QPs solved by OSQP)."""
    robot = IntegratorRobot(model, n_envs=n_envs)
    tasks = [FrameTask(model, link, gain=10.0) for link in LINKS[:n_tasks]]
    ctrl = QPController(robot, tasks, QPControllerConfig(dt=DT))
    pos0, quat0 = model.forward_kinematics(robot.q[:1], list(LINKS[:n_tasks]))
    rot0 = quat_to_matrix(quat0[0])
    phase = np.linspace(0.0, 2.0 * np.pi, n_envs, endpoint=False)
    times, osqp_calls = [], 0
    for k in range(ticks):
        a = speed * k * DT + phase
        offset = radius * np.stack([np.cos(a) - 1.0, np.sin(a), np.zeros_like(a)], axis=1)
        targets = [(pos0[0, i] + offset, np.broadcast_to(rot0[i], (n_envs, 3, 3)).copy(), None)
                   for i in range(n_tasks)]
        q, v = robot.read_states()
        rows = ctrl.distance_rows(q)
        t0 = time.perf_counter()
        qps, _ = ctrl.build(q, v, targets[0] if n_tasks == 1 else targets, rows)
        qdot, ok = ctrl.solve(k * DT, qps)
        times.append((time.perf_counter() - t0) / n_envs)
        osqp_calls += int((~qps.exact).sum())
        robot.command(q + DT * qdot, qdot)
        robot.step()
    return times, osqp_calls / (ticks * n_envs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--ticks", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--radius", type=float, default=0.05, help="circle radius [m]")
    parser.add_argument("--speed", type=float, default=2.0, help="angular speed on the circle [rad/s]")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not URDF.is_file():
        raise SystemExit(f"reference robot absent: {URDF}")
    model = RobotModel.from_urdf(str(URDF), package_dirs=[str(REFERENCE)])
    for n_tasks in (1, 2):  # compile (or load) both variants before timing
        run_once(model, n_tasks, args.envs, 5)
    times: dict[int, list[float]] = {1: [], 2: []}
    osqp: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.repeats):
        for n_tasks in (1, 2):
            t, frac = run_once(model, n_tasks, args.envs, args.ticks, args.radius, args.speed)
            times[n_tasks] += t
            osqp[n_tasks].append(frac)
    med = {k: float(np.median(v)) for k, v in times.items()}
    log.info("Stationary AI (%d DOFs), %d environments, %d ticks x %d runs each, circles of %g m at %g rad/s",
             model.n_dofs, args.envs, args.ticks, args.repeats, args.radius, args.speed)
    for k in (1, 2):
        log.info("  %d frame task%s: %.1f us per environment per tick (median), OSQP on %.0f %% of QPs",
                 k, "" if k == 1 else "s", med[k] * 1e6, 100.0 * float(np.mean(osqp[k])))
    log.info("  ratio two / one: %.2f", med[2] / med[1])


if __name__ == "__main__":
    main()
