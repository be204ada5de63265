"""What the driver reads back: joint positions, velocities, accelerations, efforts, external and compensation
efforts (all joints, arm, gripper, one joint), temperatures, the Cartesian state of the tool, RobotOutput.

Measured after the last physics step (the world is stepped to now first). Efforts are the motors' applied
torques [N m] / forces [N]; compensation efforts are gravity's at the measured joints (zero for the gripper);
external efforts are what the environment applies (app.trossen_arm.simulated_arm.SimulatedArm.external_efforts:
the efforts less the arm's own inverse dynamics; zero in free space). The Cartesian state is the tool frame's in the base frame: pose by
FK, twist J v, acceleration J a (the J-dot v term left out), wrench from the external efforts by the damped
least squares of J^T f = tau. Temperatures are a constant 30 C (no thermal model).
"""

from __future__ import annotations

import numpy as np

from app.trossen_arm.cartesian import pose_vector
from app.trossen_arm.containers import ArrayDouble6, VectorDouble
from app.trossen_arm.driver_core import DriverCore
from app.trossen_arm.robot_output import RobotOutput
from app.trossen_arm.simulated_arm import Measured

TEMPERATURE = 30.0  # [C]
WRENCH_DAMPING = 1e-3  # the tool wrench from the joints' external efforts: damped least squares of J^T f = tau
FIELDS = {  # RobotOutput.Joint.All field -> (its Gripper field, the measured row)
    "positions": ("position", "q"), "velocities": ("velocity", "v"), "accelerations": ("acceleration", "a"),
    "efforts": ("effort", "effort"), "external_efforts": ("external_effort", "external"),
    "compensation_efforts": ("compensation_effort", "compensation"),
    "rotor_temperatures": ("rotor_temperature", "temperature"),
    "driver_temperatures": ("driver_temperature", "temperature"),
}


class Outputs(DriverCore):
    """The getters of measured values."""

    def _measured(self) -> Measured | None:
        """The arm's measurements now; None before configure (the real driver then reads empty outputs)."""
        if self._slot is None:
            return None
        self._world.sync()
        return self._slot.controller.measured

    def _rows(self, sync: bool = True) -> dict[str, np.ndarray]:
        """Every joint row measured now, computed once per physics step."""
        m = self._measured() if sync else (self._slot and self._slot.controller.measured)
        if m is None:
            return {k: np.zeros(0) for k in ("q", "v", "a", "effort", "external", "compensation", "temperature")}
        c = self._slot.controller
        cached = self._cache.get("rows")
        if cached is None or cached[0] != c.output_id:
            rows = {"q": m.q, "v": m.v, "a": m.a, "effort": m.effort, "external": c.external_efforts(),
                    "compensation": c.compensation_efforts(), "temperature": np.full(len(m.q), TEMPERATURE)}
            cached = self._cache["rows"] = (c.output_id, rows)
        return cached[1]

    def _all(self, key: str) -> VectorDouble:
        return VectorDouble(self._rows()[key])

    def _arm(self, key: str) -> VectorDouble:
        return VectorDouble(self._rows()[key][:-1])

    def _gripper(self, key: str) -> float:
        row = self._rows()[key]
        return float(row[-1]) if row.size else 0.0

    def _joint(self, key: str, joint_index: int) -> float:
        j = self._joint_index(joint_index)
        self._require()
        return float(self._rows()[key][j])

    # ------------------------------------------------------------------ all joints
    def get_all_positions(self) -> VectorDouble:
        """Positions of all joints [rad, m]."""
        return self._all("q")

    def get_all_velocities(self) -> VectorDouble:
        """Velocities of all joints [rad/s, m/s]."""
        return self._all("v")

    def get_all_accelerations(self) -> VectorDouble:
        """Accelerations of all joints [rad/s^2, m/s^2]."""
        return self._all("a")

    def get_all_efforts(self) -> VectorDouble:
        """Efforts of all joints [N m, N]."""
        return self._all("effort")

    def get_all_external_efforts(self) -> VectorDouble:
        """External efforts of all joints [N m, N]."""
        return self._all("external")

    def get_all_compensation_efforts(self) -> VectorDouble:
        """Compensation efforts of all joints [N m, N]."""
        return self._all("compensation")

    def get_all_rotor_temperatures(self) -> VectorDouble:
        """Rotor temperatures of all joints [C]."""
        return self._all("temperature")

    def get_all_driver_temperatures(self) -> VectorDouble:
        """Driver temperatures of all joints [C]."""
        return self._all("temperature")

    # ------------------------------------------------------------------ arm joints
    def get_arm_positions(self) -> VectorDouble:
        """Positions of the arm joints [rad]."""
        return self._arm("q")

    def get_arm_velocities(self) -> VectorDouble:
        """Velocities of the arm joints [rad/s]."""
        return self._arm("v")

    def get_arm_accelerations(self) -> VectorDouble:
        """Accelerations of the arm joints [rad/s^2]."""
        return self._arm("a")

    def get_arm_efforts(self) -> VectorDouble:
        """Efforts of the arm joints [N m]."""
        return self._arm("effort")

    def get_arm_external_efforts(self) -> VectorDouble:
        """External efforts of the arm joints [N m]."""
        return self._arm("external")

    def get_arm_compensation_efforts(self) -> VectorDouble:
        """Compensation efforts of the arm joints [N m]."""
        return self._arm("compensation")

    def get_arm_rotor_temperatures(self) -> VectorDouble:
        """Rotor temperatures of the arm joints [C]."""
        return self._arm("temperature")

    def get_arm_driver_temperatures(self) -> VectorDouble:
        """Driver temperatures of the arm joints [C]."""
        return self._arm("temperature")

    # ------------------------------------------------------------------ gripper
    def get_gripper_position(self) -> float:
        """Position of the gripper [m]."""
        return self._gripper("q")

    def get_gripper_velocity(self) -> float:
        """Velocity of the gripper [m/s]."""
        return self._gripper("v")

    def get_gripper_acceleration(self) -> float:
        """Acceleration of the gripper [m/s^2]."""
        return self._gripper("a")

    def get_gripper_effort(self) -> float:
        """Effort of the gripper [N]."""
        return self._gripper("effort")

    def get_gripper_external_effort(self) -> float:
        """External effort of the gripper [N]."""
        return self._gripper("external")

    def get_gripper_compensation_effort(self) -> float:
        """Compensation effort of the gripper [N]."""
        return self._gripper("compensation")

    def get_gripper_rotor_temperature(self) -> float:
        """Rotor temperature of the gripper [C]."""
        return self._gripper("temperature")

    def get_gripper_driver_temperature(self) -> float:
        """Driver temperature of the gripper [C]."""
        return self._gripper("temperature")

    # ------------------------------------------------------------------ one joint
    def get_joint_position(self, joint_index: int) -> float:
        """Position of one joint [rad or m]."""
        return self._joint("q", joint_index)

    def get_joint_velocity(self, joint_index: int) -> float:
        """Velocity of one joint [rad/s or m/s]."""
        return self._joint("v", joint_index)

    def get_joint_acceleration(self, joint_index: int) -> float:
        """Acceleration of one joint [rad/s^2 or m/s^2]."""
        return self._joint("a", joint_index)

    def get_joint_effort(self, joint_index: int) -> float:
        """Effort of one joint [N m or N]."""
        return self._joint("effort", joint_index)

    def get_joint_external_effort(self, joint_index: int) -> float:
        """External effort of one joint [N m or N]."""
        return self._joint("external", joint_index)

    def get_joint_compensation_effort(self, joint_index: int) -> float:
        """Compensation effort of one joint [N m or N]."""
        return self._joint("compensation", joint_index)

    def get_joint_rotor_temperature(self, joint_index: int) -> float:
        """Rotor temperature of one joint [C]."""
        return self._joint("temperature", joint_index)

    def get_joint_driver_temperature(self, joint_index: int) -> float:
        """Driver temperature of one joint [C]."""
        return self._joint("temperature", joint_index)

    # ------------------------------------------------------------------ Cartesian
    def _cartesian(self, sync: bool = True) -> dict[str, np.ndarray]:
        """The tool's pose, twist, acceleration and wrench now, computed once per physics step."""
        rows = self._rows(sync)
        if not rows["q"].size:
            return {k: np.zeros(6) for k in ("positions", "velocities", "accelerations", "external_efforts")}
        c = self._slot.controller
        cached = self._cache.get("cartesian")
        if cached is None or cached[0] != c.output_id:
            m = c.measured
            T, J = self._tool.pose_and_jacobian(m.q_dofs)
            wrench = J @ np.linalg.solve(J.T @ J + WRENCH_DAMPING**2 * np.eye(6), rows["external"][:6])
            out = {"positions": pose_vector(T), "velocities": J @ m.v[:6],
                   "accelerations": J @ m.a[:6], "external_efforts": wrench}
            cached = self._cache["cartesian"] = (c.output_id, out)
        return cached[1]

    def get_cartesian_positions(self) -> ArrayDouble6:
        """The tool frame's pose in the base frame: translation [m], angle-axis [rad]."""
        return ArrayDouble6(self._cartesian()["positions"])

    def get_cartesian_velocities(self) -> ArrayDouble6:
        """The tool frame's twist in the base frame: linear [m/s], angular [rad/s]."""
        return ArrayDouble6(self._cartesian()["velocities"])

    def get_cartesian_accelerations(self) -> ArrayDouble6:
        """The tool frame's acceleration in the base frame: linear [m/s^2], angular [rad/s^2]."""
        return ArrayDouble6(self._cartesian()["accelerations"])

    def get_cartesian_external_efforts(self) -> ArrayDouble6:
        """The wrench on the tool frame in the base frame: force [N], torque [N m]."""
        return ArrayDouble6(self._cartesian()["external_efforts"])

    def get_robot_output(self) -> RobotOutput:
        """Everything above in one RobotOutput (its header: the cycle id and the simulated time [us])."""
        out, rows = RobotOutput(), self._rows()
        cartesian = self._cartesian(sync=False)
        for field, (one, key) in FIELDS.items():
            setattr(out.joint.all, field, rows[key])
            setattr(out.joint.arm, field, rows[key][:-1])
            setattr(out.joint.gripper, one, float(rows[key][-1]) if rows[key].size else 0.0)
        for field, value in cartesian.items():
            setattr(out.cartesian, field, value)
        if self._slot is not None:
            out.header.id = self._slot.controller.output_id
            out.header.timestamp = round(self._world.t * 1e6)
        return out
