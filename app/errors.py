"""The app's exceptions: one root, a few specific subclasses carrying data.

Every error a user can cause derives from :class:`AppError`; messages say what was
wrong and what is allowed, so the CLI can print one line and exit 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class AppError(Exception):
    """Root of every error this app raises on purpose."""


class InputError(AppError, ValueError):
    """An argument has the wrong shape, type or value (NaN, inf, zero quaternion...)."""


class URDFError(AppError):
    """A URDF file is missing, malformed, or uses something we do not support.

    Attributes:
        path: The URDF file concerned, if known.
    """

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message if path is None else f"{path}: {message}")
        self.path = path


class MeshNotFoundError(URDFError):
    """A mesh referenced by a URDF could not be found.

    Attributes:
        uri: The filename attribute as written in the URDF.
        tried: Every path that was tried, in order.
    """

    def __init__(self, uri: str, tried: Iterable[str], path: str | None = None):
        self.uri = uri
        self.tried = list(tried)
        where = ", ".join(self.tried) if self.tried else "nowhere (no package dir given)"
        super().__init__(f"mesh '{uri}' not found; tried: {where}", path)


class UnknownNameError(AppError, KeyError):
    """A link, joint or key name does not exist.

    Attributes:
        kind: What was looked up ("link", "joint", ...).
        name: The name that was asked for.
        valid: The names that would have been accepted.
    """

    def __init__(self, kind: str, name: object, valid: Iterable[str]):
        self.kind = kind
        self.name = name
        self.valid = list(valid)
        close = difflib.get_close_matches(name, [str(v) for v in self.valid], n=1) if isinstance(name, str) else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        super().__init__(f"unknown {kind} {name!r}{hint}; valid {kind} names: {self.valid}")

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return self.args[0]


class ConfigError(AppError):
    """A YAML scene or run config is invalid (syntax, unknown key, wrong type or value)."""


class NotApplicableError(AppError):
    """A closed-form solver does not apply to this robot or link.

    Attributes:
        reason: Which structural condition failed, with the measured deviation.
    """

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"closed-form IK not applicable: {reason}")


class DatasetError(AppError):
    """A recorded dataset (LeRobot v3.0/v2.1, ACT HDF5) is missing, malformed or does not fit what was asked.

    Attributes:
        path: The file or folder concerned, if known.
    """

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message if path is None else f"{path}: {message}")
        self.path = path


class IncompatibleError(InputError):
    """Two pieces (tasks or limits of one QP, say) that cannot be used together.

    Attributes:
        first, second: The two pieces (their reprs name them).
        reason: Why they cannot be combined.
    """

    def __init__(self, first: object, second: object, reason: str):
        self.first, self.second, self.reason = first, second, reason
        super().__init__(f"{first!r} and {second!r} cannot be combined: {reason}")


class DriverRuntimeError(AppError, RuntimeError):
    """What the simulated Trossen arm driver (app.trossen_arm) raises where the real ``trossen_arm`` raises its
    ``RuntimeError``: the arm in an error state, no IK solution for a Cartesian goal, a controller that cannot
    be reached. ``app.trossen_arm.RuntimeError`` is this class."""


class DriverLogicError(AppError, AssertionError):
    """What the simulated Trossen arm driver raises where the real one raises its ``LogicError`` (an
    AssertionError there too): a driver used before ``configure``, arguments of the wrong size or sign.
    ``app.trossen_arm.LogicError`` is this class."""
