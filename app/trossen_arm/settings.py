"""The driver's configurations: end effector, joint limits, network settings, joint characteristics, motor
and algorithm parameters, links and joints, the YAML file of them, versions and logging.

What the simulation uses: the end effector's ``t_flange_tool`` (the tool frame of every Cartesian command)
and the joint limits (clipping and the error checks, app.trossen_arm.simulated_arm). Everything else is kept
and handed back as set, saying once per driver (INFO) that it does not change the simulation: network
settings (no network here), friction and effort corrections, motor gains (the simulated motors have their
own), links and joints (the URDF's kinematics and inertias are simulated).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from app.trossen_arm.config_file import NETWORK_DEFAULTS, load_configs, save_configs
from app.trossen_arm.containers import VectorDouble
from app.trossen_arm.driver_core import CONTROLLER_VERSION, DRIVER_VERSION, DriverCore
from app.trossen_arm.enums import IPMethod, LogLevel, Mode, Model, Notice
from app.trossen_arm.failures import DEFAULT_LOGGER, logger_name, logic_error
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.properties import AlgorithmParameter, DiscoverResult, EndEffector, JointCharacteristic, JointLimit
from app.trossen_arm.standard import StandardJoints, StandardLinks, StandardMotorParameters, copied

CHARACTERISTIC_FIELDS = ("effort_correction", "friction_transition_velocity", "friction_constant_term",
                         "friction_coulomb_coef", "friction_viscous_coef", "position_offset")


def _default_characteristic() -> JointCharacteristic:
    c = JointCharacteristic()
    c.effort_correction, c.friction_transition_velocity = 1.0, 0.01
    return c


class Settings(DriverCore):
    """Configuration getters and setters."""

    def _setting(self, key: str):
        if key not in self._settings:
            defaults = {**NETWORK_DEFAULTS, "joint_characteristics": [_default_characteristic() for _ in
                                                                      range(N_JOINTS)],
                        "motor_parameters": copied(StandardMotorParameters.wxai_v0_default),
                        "algorithm_parameter": AlgorithmParameter(), "links": copied(StandardLinks.wxai_v0_20260626),
                        "joints": copied(StandardJoints.wxai_v0_20260626)}
            self._settings[key] = defaults[key]
        return self._settings[key]

    def _keep(self, key: str, value) -> None:
        self._require()
        if not self._settings.get("_noted"):
            logging.getLogger(self._logger).info("simulated arm: %s (and the other network, friction, motor, link "
                                                 "and joint settings) kept but not simulated", key)
            self._settings["_noted"] = True
        self._settings[key] = copied(value)

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
        slot.controller.limits = copied(limits)

    # ------------------------------------------------------------------ kept as given
    def get_ip_method(self) -> IPMethod:
        """The IP method (kept; nothing is networked)."""
        return self._setting("ip_method")

    def set_ip_method(self, method: IPMethod = IPMethod.manual) -> None:
        """Set the IP method (kept; nothing is networked)."""
        self._keep("ip_method", IPMethod(method))

    def get_manual_ip(self) -> str:
        """The manual IP (kept)."""
        return self._setting("manual_ip")

    def set_manual_ip(self, manual_ip: str = "192.168.1.2") -> None:
        """Set the manual IP (kept)."""
        self._keep("manual_ip", str(manual_ip))

    def get_dns(self) -> str:
        """The DNS (kept)."""
        return self._setting("dns")

    def set_dns(self, dns: str = "8.8.8.8") -> None:
        """Set the DNS (kept)."""
        self._keep("dns", str(dns))

    def get_gateway(self) -> str:
        """The gateway (kept)."""
        return self._setting("gateway")

    def set_gateway(self, gateway: str = "192.168.1.1") -> None:
        """Set the gateway (kept)."""
        self._keep("gateway", str(gateway))

    def get_subnet(self) -> str:
        """The subnet (kept)."""
        return self._setting("subnet")

    def set_subnet(self, subnet: str = "255.255.255.0") -> None:
        """Set the subnet (kept)."""
        self._keep("subnet", str(subnet))

    def get_factory_reset_flag(self) -> bool:
        """The factory reset flag (kept)."""
        return self._setting("factory_reset_flag")

    def set_factory_reset_flag(self, flag: bool = True) -> None:
        """Set the factory reset flag (kept)."""
        self._keep("factory_reset_flag", bool(flag))

    def get_joint_characteristics(self) -> list[JointCharacteristic]:
        """The joint characteristics (kept, not simulated)."""
        return copied(self._setting("joint_characteristics"))

    def set_joint_characteristics(self, joint_characteristics: Sequence[JointCharacteristic]) -> None:
        """Set the joint characteristics (seven; kept, not simulated)."""
        values = list(joint_characteristics)
        if len(values) != N_JOINTS:
            raise logic_error(f"Invalid joint characteristics size: expected {N_JOINTS}, got {len(values)}",
                              self._logger)
        self._keep("joint_characteristics", values)

    def _characteristic(self, field: str) -> VectorDouble:
        return VectorDouble(getattr(c, field) for c in self._setting("joint_characteristics"))

    def _set_characteristic(self, field: str, values, what: str) -> None:
        arr = self._values(values, N_JOINTS, what)
        chars = copied(self._setting("joint_characteristics"))
        for c, x in zip(chars, arr):
            setattr(c, field, x)
        self._keep("joint_characteristics", chars)

    def get_effort_corrections(self) -> VectorDouble:
        """Effort corrections (kept)."""
        return self._characteristic("effort_correction")

    def set_effort_corrections(self, effort_corrections: VectorDouble) -> None:
        """Set the effort corrections (kept)."""
        self._set_characteristic("effort_correction", effort_corrections, "effort corrections")

    def get_friction_transition_velocities(self) -> VectorDouble:
        """Friction transition velocities (kept)."""
        return self._characteristic("friction_transition_velocity")

    def set_friction_transition_velocities(self, friction_transition_velocities: VectorDouble) -> None:
        """Set the friction transition velocities (kept)."""
        self._set_characteristic("friction_transition_velocity", friction_transition_velocities,
                                 "friction transition velocities")

    def get_friction_constant_terms(self) -> VectorDouble:
        """Friction constant terms (kept)."""
        return self._characteristic("friction_constant_term")

    def set_friction_constant_terms(self, friction_constant_terms: VectorDouble) -> None:
        """Set the friction constant terms (kept)."""
        self._set_characteristic("friction_constant_term", friction_constant_terms, "friction constant terms")

    def get_friction_coulomb_coefs(self) -> VectorDouble:
        """Friction coulomb coefs (kept)."""
        return self._characteristic("friction_coulomb_coef")

    def set_friction_coulomb_coefs(self, friction_coulomb_coefs: VectorDouble) -> None:
        """Set the friction coulomb coefs (kept)."""
        self._set_characteristic("friction_coulomb_coef", friction_coulomb_coefs, "friction coulomb coefs")

    def get_friction_viscous_coefs(self) -> VectorDouble:
        """Friction viscous coefs (kept)."""
        return self._characteristic("friction_viscous_coef")

    def set_friction_viscous_coefs(self, friction_viscous_coefs: VectorDouble) -> None:
        """Set the friction viscous coefs (kept)."""
        self._set_characteristic("friction_viscous_coef", friction_viscous_coefs, "friction viscous coefs")

    def get_position_offsets(self) -> VectorDouble:
        """Position offsets (kept)."""
        return self._characteristic("position_offset")

    def set_position_offsets(self, position_offsets: VectorDouble) -> None:
        """Set the position offsets (kept)."""
        self._set_characteristic("position_offset", position_offsets, "position offsets")

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
