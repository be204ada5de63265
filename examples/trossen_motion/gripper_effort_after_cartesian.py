"""Smooth: trossen_arm issue #71's script. With firmware 1.8.0 the arm "retracts very suddenly" when the gripper
switches to external_effort after a Cartesian move; Trossen fixed it in 1.8.1, and the simulator models the fixed
driver: the arm holds its pose while the gripper pushes."""
import app.trossen_arm as trossen_arm  # was: import trossen_arm

driver = trossen_arm.TrossenArmDriver()
driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, "127.0.0.2", False)

p = driver.get_cartesian_positions()
p[0] += 0.1
p[2] += 0.2
driver.set_arm_modes(trossen_arm.Mode.position)
driver.set_gripper_mode(trossen_arm.Mode.position)

driver.set_cartesian_positions(p, trossen_arm.InterpolationSpace.cartesian)
driver.set_gripper_mode(trossen_arm.Mode.external_effort)
driver.set_gripper_external_effort(20, 2.0, True)
