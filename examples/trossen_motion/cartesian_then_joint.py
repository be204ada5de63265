"""Smooth: trossen_arm issue #78's sequence, a Cartesian-interpolated move and then a joint goal, without the
joint-space move at the same pose its author had to put between them. Drivers since 1.8.x anchor each new
trajectory at the commanded state (and since 1.9.3 at the moment it is evaluated), so the joint goal starts where
the Cartesian move left the arm; the simulator does the same."""
import time

import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
driver.set_all_modes(trossen_arm.Mode.position)

driver.set_arm_positions([0.0, 1.0, 0.8, 0.0, 0.0, 0.0], 2.0, True)
pose = list(driver.get_cartesian_positions())
pose[2] += 0.1
driver.set_cartesian_positions(pose, trossen_arm.InterpolationSpace.cartesian, 3.0, True)
driver.set_all_positions([1.1, 1.57, 1.57, -1.55, 0.0, 1.2, 0.011], 2.0, True)
