"""A drop-in for Trossen's ``trossen_arm`` driver (1.11.0) over a simulated WidowX AI in our PyBullet scene.

A script written for the real arm runs unchanged but for its import line::

    import app.trossen_arm as trossen_arm

``configure`` opens no connection: the IP address only names which simulated arm (app.trossen_arm.layout;
the Stationary AI's .2-.5 are its four arms, in one world). Simulated time follows the wall clock at
``APP_TROSSEN_TIME_SCALE`` (default 1, real time; 0: only blocking goals advance it). See docs/trossen_arm.md.
"""

from app.errors import DriverLogicError as LogicError
from app.errors import DriverRuntimeError as RuntimeError  # the real package's name for its runtime errors
from app.trossen_arm.containers import ArrayDouble3, ArrayDouble6, ArrayDouble9, VectorDouble
from app.trossen_arm.driver import TrossenArmDriver
from app.trossen_arm.enums import (ERROR_INFORMATION, MODE_NAME, MODEL_NAME, ErrorState, InterpolationSpace, IPMethod,
                                   LogLevel, Mode, Model, Notice)
from app.trossen_arm.properties import (AlgorithmParameter, DiscoverResult, EndEffector, Joint, JointCharacteristic,
                                        JointLimit, Link, MotorParameter, PIDParameter)
from app.trossen_arm.robot_output import RobotOutput
from app.trossen_arm.standard import StandardEndEffector, StandardJoints, StandardLinks, StandardMotorParameters

__all__ = ["ERROR_INFORMATION", "MODEL_NAME", "MODE_NAME", "AlgorithmParameter", "ArrayDouble3", "ArrayDouble6",
           "ArrayDouble9", "DiscoverResult", "EndEffector", "ErrorState", "IPMethod", "InterpolationSpace", "Joint",
           "JointCharacteristic", "JointLimit", "Link", "LogLevel", "LogicError", "Mode", "Model", "MotorParameter",
           "Notice", "PIDParameter", "RobotOutput", "RuntimeError", "StandardEndEffector", "StandardJoints",
           "StandardLinks", "StandardMotorParameters", "TrossenArmDriver", "VectorDouble"]
