"""What one behind tick of app.track's diagnosis costs (app.control.stall_causes.StallDiagnosis.causes), by kind:
a target in reach, a target out of reach with the last search carried (app.track's way), and out of reach with a
full search every tick (the way before: every restart, every tick). Medians over the ticks, per repeat.

    python scripts/bench_stall_ticks.py --ticks 400 --repeats 3
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

from app import RobotModel
from app.control.stall_causes import StallDiagnosis
from app.kinematics.rotations import quat_to_matrix

log = logging.getLogger("bench_stall_ticks")
URDF = Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf"


def median_tick_us(model, carry: bool, target: np.ndarray, ticks: int) -> float:
    """The median cost [us] of ``ticks`` diagnoses of a target drifting 10 um a tick, from the mid joints."""
    diagnosis = StallDiagnosis(model, ["ee_gripper_link"], (True,) * 3, (True,) * 3, np.r_[model.v_max[:6], 0, 0],
                               40.0, 1 / 500, carry=carry)
    q = model.mid_config()
    R = quat_to_matrix(model.forward_kinematics(q, ["ee_gripper_link"])[1][0])
    costs = []
    for k in range(ticks):
        t0 = time.perf_counter()
        diagnosis.causes(0, q, np.zeros(8), np.zeros(8), target + [1e-5 * k, 0.0, 0.0], R, np.zeros(6), [])
        costs.append(time.perf_counter() - t0)
    return float(np.median(costs) * 1e6)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ticks", type=int, default=400)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model = RobotModel.from_urdf(str(URDF))
    q = model.mid_config()
    reach = model.forward_kinematics(q, ["ee_gripper_link"])[0][0] + [0.0, 0.0, 0.01]
    far = np.array([1.0, 0.0, 0.3])  # 1 m out: beyond the WidowX AI's reach
    median_tick_us(model, True, reach, 20)  # kernels compiled, caches warm
    for r in range(args.repeats):
        a, b, c = (median_tick_us(model, True, reach, args.ticks), median_tick_us(model, True, far, args.ticks),
                   median_tick_us(model, False, far, args.ticks))
        log.info("repeat %d: behind, in reach %.0f us; out of reach, carried %.0f us (%.2fx); out of reach, full "
                 "search every tick %.0f us (%.2fx)", r, a, b, b / a, c, c / a)


if __name__ == "__main__":
    main()
