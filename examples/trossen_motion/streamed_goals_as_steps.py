"""Flagged: position goals streamed at 50 Hz, each with goal_time 0 (applied at once, the driver's rule at or
below 1 ms): the commanded joint moves in steps, 20 ms apart, so its velocity jumps between each step and the next
(the instability Trossen's 1.9.3 changelog fixed for goals updated near the trajectory rate comes from the same
mismatch between the goals' rate and their goal_time)."""
import math

import time

import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
driver.set_all_modes(trossen_arm.Mode.position)

PERIOD = 0.02  # [s]: 50 Hz
driver.set_arm_positions([0.0, 1.0, 0.8, 0.0, 0.0, 0.0], 2.0, True)
for k in range(150):
    driver.set_arm_positions([0.3 * (1.0 - math.cos(2.0 * k * PERIOD)), 1.0, 0.8, 0.0, 0.0, 0.0], 0.0, False)
    time.sleep(PERIOD)
