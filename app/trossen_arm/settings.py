"""The driver's configurations: end effector, joint limits, motor and algorithm parameters, links and joints, the
YAML file of them, versions and logging; the network settings (app.trossen_arm.network_settings) and the joint
characteristics (app.trossen_arm.joint_characteristics) are mixed in.

What the simulation uses: the end effector's ``t_flange_tool`` (the tool frame of every Cartesian command)
and the joint limits (clipping and the error checks, app.trossen_arm.simulated_arm). Everything else is kept
and handed back as set, saying once per driver (INFO) that it does not change the simulation: network
settings (no network here), friction and effort corrections, motor gains (the simulated motors have their
own), links and joints (the URDF's kinematics and inertias are simulated).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence

from app.trossen_arm.config_file import load_configs, save_configs
from app.trossen_arm.driver_core import CONTROLLER_VERSION, DRIVER_VERSION
from app.trossen_arm.enums import LogLevel, Mode, Model, Notice
from app.trossen_arm.failures import DEFAULT_LOGGER, logger_name, logic_error
from app.trossen_arm.joint_characteristics import CharacteristicConfig
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.network_settings import NetworkConfig
from app.trossen_arm.properties import AlgorithmParameter, DiscoverResult, EndEffector, JointLimit
from app.trossen_arm.standard import copied


class Settings(NetworkConfig, CharacteristicConfig):
    """Configuration getters and setters."""

    # ------------------------------------------------------------------ what the simulation uses
    def get_end_effector(self) -> EndEffector:
        """The end effector properties (a copy)."""
        self._require()
        return copied(self._end_effector)

    def set_end_effector(self, end_effector: EndEffector) -> None:
        """Set the end effector properties: its t_flange_tool moves the tool frame of Cartesian commands."""
        self._ready()
        self._set_end_effector(end_effector)

    def get_joint_limits(self) -> list[JointLimit]:
        """The joint limits of all joints (copies)."""
        return copied(self._require().controller.limits)

    def set_joint_limits(self, joint_limits: Sequence[JointLimit]) -> None:
        """Set the joint limits of all joints (seven JointLimits)."""
        slot = self._ready()
        limits = list(joint_limits)
        if len(limits) != N_JOINTS:
            raise logic_error(f"Invalid joint limits size: expected {N_JOINTS}, got {len(limits)}", self._logger)
        for j, limit in enumerate(limits):
            problem = _limit_problem(limit)
            if problem:
                raise logic_error(f"Invalid joint limit of joint {j}: {problem}", self._logger)
        slot.controller.limits = copied(limits)

    def get_motor_parameters(self) -> list[dict[Mode, object]]:
        """Motor parameters of every mode of every joint (kept, not simulated)."""
        return copied(self._setting("motor_parameters"))

    def set_motor_parameters(self, motor_parameters: Sequence[Mapping[Mode, object]]) -> None:
        """Set the motor parameters (kept, not simulated)."""
        self._keep("motor_parameters", [dict(m) for m in motor_parameters])

    def get_algorithm_parameter(self) -> AlgorithmParameter:
        """The algorithm parameter (kept)."""
        return copied(self._setting("algorithm_parameter"))

    def set_algorithm_parameter(self, algorithm_parameter: AlgorithmParameter) -> None:
        """Set the algorithm parameter (kept)."""
        self._keep("algorithm_parameter", algorithm_parameter)

    def get_links(self) -> list:
        """Link inertial properties (kept; the URDF's are simulated)."""
        return copied(self._setting("links"))

    def set_links(self, links: Sequence) -> None:
        """Set the link inertial properties (kept; the URDF's are simulated)."""
        self._keep("links", list(links))

    def get_joints(self) -> list:
        """Joint kinematic properties (kept; the URDF's are simulated)."""
        return copied(self._setting("joints"))

    def set_joints(self, joints: Sequence) -> None:
        """Set the joint kinematic properties (kept; the URDF's are simulated)."""
        self._keep("joints", list(joints))

    # ------------------------------------------------------------------ files, versions, logging
    def save_configs_to_file(self, file_path: str) -> None:
        """Save the network settings, joint limits and the end effector's tool frame to a YAML file."""
        self._require()
        save_configs(self, file_path)

    def load_configs_from_file(self, file_path: str) -> None:
        """Load configurations from a YAML file (as save_configs_to_file writes, or Trossen's) and set them."""
        load_configs(self, file_path)

    def get_driver_version(self) -> str:
        """The driver version (the trossen_arm release whose interface this is)."""
        return DRIVER_VERSION

    def get_controller_version(self) -> str:
        """The simulated controller's firmware version."""
        self._require()
        return CONTROLLER_VERSION

    def set_log_level(self, arg0: LogLevel) -> None:
        """Set this driver's minimum log level (its Python logger's level)."""
        levels = {LogLevel.trace: 5, LogLevel.debug: 10, LogLevel.info: 20, LogLevel.warn: 30, LogLevel.error: 40,
                  LogLevel.critical: 50}
        logging.getLogger(self._logger).setLevel(levels[LogLevel(arg0)])

    @staticmethod
    def get_default_logger_name() -> str:
        """The default logger name."""
        return DEFAULT_LOGGER

    @staticmethod
    def get_logger_name(arg0: Model, arg1: str) -> str:
        """The logger name of a driver of model ``arg0`` at IP ``arg1``."""
        return logger_name(Model(arg0).name, str(arg1))

    @staticmethod
    def set_logger_backend(arg0: Callable[[LogLevel, str, str], None]) -> None:
        """Send the driver's log messages to ``arg0(level, logger_name, message)`` instead of logging."""
        from app.trossen_arm.log_backend import install
        install(arg0)

    @staticmethod
    def disable_notice(arg0: Notice) -> None:
        """Disable a notice (the simulation issues none)."""
        Notice(arg0)

    @staticmethod
    def discover(subnet: str, ip_start: int = 1, ip_end: int = 254, timeout: float = 0.01) -> list[DiscoverResult]:
        """The simulated arms answering on ``subnet`` with a last number in [ip_start, ip_end]: the layout's (the
        Stationary AI's four, .2-.5, app.trossen_arm.layout) and any other loaded so far, with their error
        states."""
        from app.trossen_arm.world import loaded_arms, world
        states = {number: slot.controller.error_state for number, slot in loaded_arms()}
        out = []
        for number in sorted(set(world().layout.places) | set(states)):
            if ip_start <= number <= ip_end:
                r = DiscoverResult()
                r.ip, r.model, r.firmware_version = f"{subnet}.{number}", Model.wxai_v0, CONTROLLER_VERSION
                if number in states:
                    r.error_state = states[number]
                out.append(r)
        return out


def _limit_problem(limit: JointLimit) -> str:
    """What is wrong with one joint's limits ("" if nothing): every field finite, tolerances and the velocity and
    effort bounds not negative, position_min below position_max (a NaN bound left every joint reading NaN)."""
    fields = ("position_min", "position_max", "position_tolerance", "velocity_max", "velocity_tolerance",
              "effort_max", "effort_tolerance")
    for name in fields:
        value = getattr(limit, name)
        if not math.isfinite(value):
            return f"{name} must be a finite number, got {value}"
        if name != "position_min" and name != "position_max" and value < 0:
            return f"{name} must not be negative, got {value}"
    if not limit.position_min < limit.position_max:
        return f"position_min ({limit.position_min}) must be below position_max ({limit.position_max})"
    return ""
