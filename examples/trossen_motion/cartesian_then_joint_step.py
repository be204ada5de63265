"""Flagged: cartesian_then_joint.py with the joint goal given a goal_time of 1 ms or less, which the driver
applies at once (its rule: no interpolation at or below 1 ms): the joints are commanded 1-2 rad in one step."""
import time

import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
driver.set_all_modes(trossen_arm.Mode.position)

driver.set_arm_positions([0.0, 1.0, 0.8, 0.0, 0.0, 0.0], 2.0, True)
pose = list(driver.get_cartesian_positions())
pose[2] += 0.1
driver.set_cartesian_positions(pose, trossen_arm.InterpolationSpace.cartesian, 3.0, True)
driver.set_all_positions([1.1, 1.57, 1.57, -1.55, 0.0, 1.2, 0.011], 0.0, False)
time.sleep(2.0)
