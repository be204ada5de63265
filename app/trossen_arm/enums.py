"""The driver's enumerations and their name maps, as ``trossen_arm`` 1.11.0 defines them (values included).

Each is an ``IntEnum``: ``Mode(1)``, ``int(Mode.position)``, ``Mode.position.name`` / ``.value`` and
``Mode.__members__`` behave as the pybind11 enums of the real package do.
"""

from __future__ import annotations

import enum


class _Enum(enum.IntEnum):
    """An IntEnum printed as pybind11 prints its enums (``Mode.idle``, ``<Mode.idle: 0>``)."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {self.value}>"


class Model(_Enum):
    """Robot models."""

    wxai_v0 = 0
    vxai_v0_right = 1
    vxai_v0_left = 2


class Mode(_Enum):
    """Operation modes of a joint: idle (braked), position, velocity, external_effort, effort."""

    idle = 0
    position = 1
    velocity = 2
    external_effort = 3
    effort = 4


class InterpolationSpace(_Enum):
    """Interpolation spaces of a Cartesian command: joint or Cartesian space."""

    joint = 0
    cartesian = 1


class IPMethod(_Enum):
    """How the controller gets its IP address (accepted and kept here; nothing is networked)."""

    manual = 0
    dhcp = 1


class LogLevel(_Enum):
    """Log severity levels."""

    trace = 0
    debug = 1
    info = 2
    warn = 3
    error = 4
    critical = 5


class Notice(_Enum):
    """Notices the driver can issue (disable_notice silences one)."""

    default_motor_parameters_20260317 = 0


class ErrorState(_Enum):
    """Error states reported by the arm controller."""

    none = 0
    ethernet_init_failed = 1
    can_init_failed = 2
    joint_command_failed = 3
    joint_feedback_failed = 4
    joint_clear_error_failed = 5
    joint_enable_failed = 6
    joint_disable_failed = 7
    joint_set_home_failed = 8
    joint_disabled_unexpectedly = 9
    joint_overheated = 10
    invalid_mode = 11
    invalid_robot_command = 12
    invalid_configuration_address = 13
    robot_input_mode_mismatch = 14
    joint_limit_exceeded = 15
    robot_input_infinite = 16


ERROR_INFORMATION: dict = {
    ErrorState.none: "No error",
    ErrorState.ethernet_init_failed: "Controller's Ethernet manager failed to initialize",
    ErrorState.can_init_failed: "Controller's CAN interface failed to initialize",
    ErrorState.joint_command_failed: "Controller's CAN interface failed to send a message",
    ErrorState.joint_feedback_failed: "Controller's CAN interface failed to receive a message",
    ErrorState.joint_clear_error_failed: "Joint clear error command failed",
    ErrorState.joint_enable_failed: "Joint enable command failed",
    ErrorState.joint_disable_failed: "Joint disable command failed",
    ErrorState.joint_set_home_failed: "Joint home calibration command failed",
    ErrorState.joint_disabled_unexpectedly: "Joint disabled unexpectedly",
    ErrorState.joint_overheated: "Joint overheated",
    ErrorState.invalid_mode: "Invalid mode command received",
    ErrorState.invalid_robot_command: "Invalid robot command indicator received",
    ErrorState.invalid_configuration_address: "Invalid configuration address",
    ErrorState.robot_input_mode_mismatch: "Robot input with modes different than configured modes received",
    ErrorState.joint_limit_exceeded: "Joint limit exceeded",
    ErrorState.robot_input_infinite: "Robot input with infinite values received",
}
MODEL_NAME: dict = {m: m.name for m in Model}
MODE_NAME: dict = {m: m.name for m in Mode}
