"""Smooth: velocity_switch_mid_motion.py corrected as Trossen's changelog implies: the position goal blocks until
it is reached, and only then do the joints switch into velocity mode (starting from zero, as they stand)."""
import time

import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
driver.set_all_modes(trossen_arm.Mode.position)

driver.set_arm_positions([0.8, 1.0, 0.8, 0.0, 0.0, 0.0], 1.0, True)
driver.set_arm_modes(trossen_arm.Mode.velocity)
driver.set_arm_velocities([0.0] * 6, 0.5, True)
