"""``RobotOutput``: what the arm reports each cycle, nested as the real package's (header, joint.all / arm /
gripper, cartesian). Units: rad, rad/s, rad/s^2, N m for arm joints; m, m/s, m/s^2, N for the gripper;
Cartesian poses as translation [m] + angle-axis [rad] of the tool frame in the base frame, twists and
accelerations linear first, wrenches force [N] first."""

from __future__ import annotations

from app.trossen_arm.containers import ArrayDouble6, VectorDouble
from app.trossen_arm.properties import Field, Struct


class RobotOutput(Struct):
    """Robot output."""

    class Header(Struct):
        """Header: a consecutive id and the time since configuration [us] (simulated time)."""

        def __init__(self) -> None:
            pass

        id = Field(int, "Consecutively increasing ID since configuration")
        timestamp = Field(int, "Timestamp in microseconds since configuration")

    class Cartesian(Struct):
        """Cartesian outputs of the tool frame, measured in the base frame."""

        def __init__(self) -> None:
            pass

        positions = Field(ArrayDouble6, "Translation in m, then the angle-axis rotation in rad")
        velocities = Field(ArrayDouble6, "Linear velocity in m/s, then angular velocity in rad/s")
        accelerations = Field(ArrayDouble6, "Linear acceleration in m/s^2, then angular in rad/s^2")
        external_efforts = Field(ArrayDouble6, "Force in N, then torque in Nm, applied at the tool frame")

    class Joint(Struct):
        """Outputs in joint space."""

        class All(Struct):
            """Outputs of all joints (arm joints, then the gripper)."""

            def __init__(self) -> None:
                pass

            positions = Field(VectorDouble, "Positions in rad for arm joints and m for the gripper joint")
            velocities = Field(VectorDouble, "Velocities in rad/s for arm joints and m/s for the gripper joint")
            accelerations = Field(VectorDouble, "Accelerations in rad/s^2 and m/s^2")
            efforts = Field(VectorDouble, "Efforts in Nm for arm joints and N for the gripper joint")
            external_efforts = Field(VectorDouble, "External efforts in Nm and N")
            compensation_efforts = Field(VectorDouble, "Compensation efforts in Nm and N")
            rotor_temperatures = Field(VectorDouble, "Rotor temperatures in C")
            driver_temperatures = Field(VectorDouble, "Driver temperatures in C")

        class Arm(Struct):
            """Outputs of the arm joints."""

            def __init__(self) -> None:
                pass

            positions = Field(VectorDouble, "Positions in rad")
            velocities = Field(VectorDouble, "Velocities in rad/s")
            accelerations = Field(VectorDouble, "Accelerations in rad/s^2")
            efforts = Field(VectorDouble, "Efforts in Nm")
            external_efforts = Field(VectorDouble, "External efforts in Nm")
            compensation_efforts = Field(VectorDouble, "Compensation efforts in Nm")
            rotor_temperatures = Field(VectorDouble, "Rotor temperatures in C")
            driver_temperatures = Field(VectorDouble, "Driver temperatures in C")

        class Gripper(Struct):
            """Outputs of the gripper joint."""

            def __init__(self) -> None:
                pass

            position = Field(float, "Position in m")
            velocity = Field(float, "Velocity in m/s")
            acceleration = Field(float, "Acceleration in m/s^2")
            effort = Field(float, "Effort in N")
            external_effort = Field(float, "External effort in N")
            compensation_effort = Field(float, "Compensation effort in N")
            rotor_temperature = Field(float, "Rotor temperature in C")
            driver_temperature = Field(float, "Driver temperature in C")

        def __init__(self) -> None:
            pass

        all = Field(All, "Outputs of all joints")
        arm = Field(Arm, "Outputs of the arm joints")
        gripper = Field(Gripper, "Outputs of the gripper joint")

    def __init__(self) -> None:
        pass

    header = Field(Header, "Header")
    joint = Field(Joint, "Outputs in joint space")
    cartesian = Field(Cartesian, "Outputs in Cartesian space")
