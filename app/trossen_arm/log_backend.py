"""``TrossenArmDriver.set_logger_backend``: the driver's log records handed to a callable instead of logging's
handlers, as ``callback(level: LogLevel, logger_name: str, message: str)``.

The driver's loggers are ``trossen_arm_driver`` and ``<model>@<ip>`` (app.trossen_arm.failures); a handler on
the root logger picks their records (and app.trossen_arm's own) and stops them there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.trossen_arm.enums import LogLevel
from app.trossen_arm.failures import DEFAULT_LOGGER

_LEVELS = ((50, LogLevel.critical), (40, LogLevel.error), (30, LogLevel.warn), (20, LogLevel.info),
           (10, LogLevel.debug), (0, LogLevel.trace))


def _is_driver(name: str) -> bool:
    return name == DEFAULT_LOGGER or "@" in name or name.startswith("app.trossen_arm")


class _Backend(logging.Handler):
    def __init__(self, callback: Callable[[LogLevel, str, str], None]):
        super().__init__()
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        level = next(lv for floor, lv in _LEVELS if record.levelno >= floor)
        self.callback(level, record.name, record.getMessage())


class _DriverOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _is_driver(record.name)


_installed: _Backend | None = None


def install(callback: Callable[[LogLevel, str, str], None]) -> None:
    """Route the driver's records to ``callback`` from now on (replacing a backend installed before)."""
    global _installed
    root = logging.getLogger()
    if _installed is not None:
        root.removeHandler(_installed)
    _installed = _Backend(callback)
    _installed.addFilter(_DriverOnly())
    root.addHandler(_installed)
