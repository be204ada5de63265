"""Smooth: streamed_goals_as_steps.py corrected: each goal's goal_time is the stream's period, so the driver
interpolates linearly (its rule between 1 ms and 0.2 s) from each goal to the next and the commanded joint moves
continuously."""
import math

import time

import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
driver.set_all_modes(trossen_arm.Mode.position)

PERIOD = 0.02  # [s]: 50 Hz
driver.set_arm_positions([0.0, 1.0, 0.8, 0.0, 0.0, 0.0], 2.0, True)
for k in range(150):
    driver.set_arm_positions([0.3 * (1.0 - math.cos(2.0 * k * PERIOD)), 1.0, 0.8, 0.0, 0.0, 0.0], PERIOD, False)
    time.sleep(PERIOD)
