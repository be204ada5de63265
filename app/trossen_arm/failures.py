"""How the driver fails: log the message at CRITICAL on the driver's logger, then raise it with the line the
real driver appends ("Please refer to our troubleshooting guide at ..."), as trossen_arm 1.11.0 does.

Logger names are the real ones: ``trossen_arm_driver`` before configure, ``<model>@<ip>`` after.
"""

from __future__ import annotations

import logging

from app.errors import DriverLogicError, DriverRuntimeError

DEFAULT_LOGGER = "trossen_arm_driver"
GUIDE = "Please refer to our troubleshooting guide at https://docs.trossenrobotics.com/trossen_arm/main/troubleshooting.html"
NOT_CONFIGURED = "This TrossenArmDriver is not configured"


def logger_name(model_name: str, ip: str) -> str:
    """The logger of a configured driver: ``wxai_v0@192.168.1.2``."""
    return f"{model_name}@{ip}"


def runtime_error(message: str, logger: str = DEFAULT_LOGGER) -> DriverRuntimeError:
    """The RuntimeError to raise, logged first."""
    text = f"{message}\n{GUIDE}"
    logging.getLogger(logger).critical(text)
    return DriverRuntimeError(text)


def logic_error(message: str, logger: str = DEFAULT_LOGGER) -> DriverLogicError:
    """The LogicError to raise, logged first."""
    text = f"{message}\n{GUIDE}"
    logging.getLogger(logger).critical(text)
    return DriverLogicError(text)
