"""Flagged: the arm joints switched into velocity mode while a position goal moves them. Since driver 1.9.3 a
switch into velocity, external_effort or effort mode starts from a zero command (Trossen's changelog), so the
joints, moving at up to 1.5 rad/s, are told to stand still at once."""
import time

import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)
driver.set_all_modes(trossen_arm.Mode.position)

driver.set_arm_positions([0.8, 1.0, 0.8, 0.0, 0.0, 0.0], 1.0, False)
time.sleep(0.5)  # halfway: the joints at their fastest
driver.set_arm_modes(trossen_arm.Mode.velocity)
driver.set_arm_velocities([0.0] * 6, 0.5, True)
