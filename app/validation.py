"""Boundary checks, the one place for them: values of configuration sections and array arguments.

Config values (YAML sections and option dataclasses): :func:`convert` turns a value into its field's type hint
or raises an error naming the key and what was expected; every frozen config dataclass lists its own value
checks in a ``checks(at, ctx)`` method beside its fields, rows ``(where, ok, message)`` (``at(key)`` says
where a key came from: the file and the key path), and :func:`raise_first` turns the first failed row into a
ConfigError "file: key.path: message". Array arguments: each ``as_*`` helper raises
:class:`~app.errors.InputError` with the argument's name, the shape or value received and what is allowed,
before any numpy call can fail deep down.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import os
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from app.errors import ConfigError, InputError

Check = tuple[str, bool, str]  # (where: "file: key.path", ok, what is allowed and what was given)
FOV_DEG = (1.0, 179.0)  # a camera's vertical field of view [deg]: TinyRenderer hangs on a near-zero one


def fov_check(where: str, fov: float) -> Check:
    """A camera's vertical field of view within FOV_DEG."""
    lo, hi = FOV_DEG
    return (where, finite(fov) and lo <= fov <= hi, f"must be in [{lo:g}, {hi:g}] degrees, got {fov}")


class Where(NamedTuple):
    """Where a section's keys came from: ``locate(path) -> "file: a.b[0].c"`` and the section's key path."""

    locate: Callable[[tuple], str]
    path: tuple = ()

    def __call__(self, *keys: str | int) -> str:
        """The location of the key ``keys`` (names or list indices) below this section."""
        return self.locate(self.path + keys)

    def sub(self, *keys: str | int) -> Where:
        """The location of a subsection."""
        return Where(self.locate, self.path + keys)


def key_path(path: tuple) -> str:
    """``("objects", 0, "mass")`` -> ``"objects[0].mass"``."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else f".{key}" if out else str(key)
    return out


def in_file(name: str) -> Where:
    """Keys of the file ``name`` (the top level)."""
    return Where(lambda path: f"{name}: {key_path(path)}")


class CheckContext(NamedTuple):
    """What a section's checks may look at beyond its own fields: the run and scene being loaded, where the
    scene's keys came from, and (in the second pass, after the robot description loaded) its kinematic model."""

    run: Any
    scene: Any
    scene_at: Where
    model: Any = None


def raise_first(checks: list[Check], error: type[Exception] = ConfigError) -> None:
    """``error`` "where: message" of the first failed check."""
    for where, ok, message in checks:
        if not ok:
            raise error(f"{where}: {message}")


def finite(x: object) -> bool:
    """A real, finite number (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def nonzero(quat: Sequence[float]) -> bool:
    """A quaternion with a nonzero entry."""
    return any(quat)


def yaml_syntax_error(exc: Exception, path: object) -> ConfigError:
    """One line for a YAML parser's error in the file ``path``: ``path:line:column: YAML syntax error: problem``
    (PyYAML's own text spans several lines with the offending source)."""
    mark = getattr(exc, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    return ConfigError(f"{where}: YAML syntax error: {problem}")


def unknown_key(key: object, valid: list[str], where: str) -> ConfigError:
    """ConfigError for a key not among ``valid`` (with the closest valid one)."""
    close = difflib.get_close_matches(str(key), valid, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ConfigError(f"{where.rstrip(':')}: unknown key '{key}'{hint}; valid keys: {sorted(valid)}")


@functools.lru_cache(maxsize=None)
def type_hints(cls: type) -> dict[str, object]:
    """``typing.get_type_hints(cls)``, resolved once per class."""
    return typing.get_type_hints(cls)


MAX_MAGNITUDE = 1e6  # no number a scene, motion or spec needs (m, s, kg, N, rad, Hz) is larger: 1e200 m ran whole
# simulations into infinite reports


def convert(hint: object, value: object, where: str, error: type[Exception] = ConfigError,
            section: Callable | None = None) -> object:
    """``value`` as the type ``hint`` (numbers, bools, strings, dicts, tuples, optionals; a dataclass through
    ``section(cls, value, where)``), or ``error`` "where: expected ..., got ..."."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return convert(inner, value, where, error, section)
    if dataclasses.is_dataclass(hint) and section is not None:
        return section(hint, value, where)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise error(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(args[0], v, f"{where}[{i}]", error, section) for i, v in enumerate(value))
        if len(value) != len(args):
            raise error(f"{where}: expected a list of {len(args)} values, got {len(value)}: {value!r}")
        return tuple(convert(a, v, f"{where}[{i}]", error, section) for i, (a, v) in enumerate(zip(args, value)))
    return _scalar(hint, value, where, error)


def _scalar(hint: object, value: object, where: str, error: type[Exception]) -> object:
    """A number, bool, string or mapping ``value`` checked against ``hint``."""
    is_bool = isinstance(value, (bool, np.bool_))
    if hint is float:
        if is_bool or not isinstance(value, (int, float, np.integer, np.floating)):
            raise error(f"{where}: expected a number, got {value!r:.80}{_yaml_number_hint(value)}")
        if not math.isfinite(value):
            raise error(f"{where}: must be a finite number, got {value!r}")
        if abs(value) > MAX_MAGNITUDE:
            raise error(f"{where}: must be within +-{MAX_MAGNITUDE:g} (SI units: m, s, kg, N, rad), got {value!r}")
        return float(value)
    if hint is int:
        if is_bool or not isinstance(value, (int, np.integer)):
            raise error(f"{where}: expected an integer, got {value!r:.80}")
        return int(value)
    if hint is bool:
        if not is_bool:
            raise error(f"{where}: expected bool (true or false), got {value!r:.80}")
        return bool(value)
    if hint in (str, dict):
        if not isinstance(value, hint):
            raise error(f"{where}: expected {hint.__name__}, got {value!r:.80}")
        return value
    raise error(f"{where}: unsupported field type {hint}")  # pragma: no cover - a schema bug


def _yaml_number_hint(value: object) -> str:
    """Why a number the user wrote arrived as text: YAML 1.1 (PyYAML) reads ``1e9``, ``1e-3`` or ``1.0e9`` as a
    string; a float needs a decimal point and a signed exponent (``1.0e+9``)."""
    found = re.fullmatch(r"([-+]?(?:\d+\.?\d*|\.\d+))[eE]([-+]?)(\d+)", value.strip()) if isinstance(value, str) else None
    if found is None:
        return ""
    mantissa, sign, digits = found.groups()
    fixed = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{sign or '+'}{digits}"
    return f" (YAML reads {value} as text; write {fixed}: a decimal point and a signed exponent)"


def check_types(obj: object, error: type[Exception] = InputError) -> None:
    """Every field of dataclass ``obj`` holds a value of its annotated type (numbers finite)."""
    for name, hint in _field_hints(type(obj)):
        convert(hint, getattr(obj, name), name, error)


def check_spec(spec, label: str, model=None, **extra):
    """A spec dataclass (app.specs) handed to the API, checked as a scene file's section is: every field converted
    to its annotated type (arrays as lists; numbers finite), then the spec's own ``checks(at, model, **extra)``.
    Returns the spec with its values so converted; InputError "label: key: message" otherwise."""
    at = Where(lambda path: f"{label}: {key_path(path)}")
    values = {}
    for name, hint in _field_hints(type(spec)):
        value = getattr(spec, name)
        values[name] = convert(hint, value.tolist() if isinstance(value, np.ndarray) else value, at(name), InputError)
    spec = dataclasses.replace(spec, **values)
    raise_first(spec.checks(at, model, **extra), InputError)
    return spec


@functools.lru_cache(maxsize=None)
def _field_hints(cls: type) -> tuple[tuple[str, object], ...]:
    hints = type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def file_name_problem(name: object, suffix: str) -> str | None:
    """Why ``name`` is not a plain, visible file name ending in ``suffix`` (None when it is)."""
    if not isinstance(name, str) or not name.strip():
        return f"must be a file name, got {name!r}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return f"must be a file name without newlines or control characters, got {name!r}"
    if "/" in name or "\\" in name or name in (".", "..") or os.path.isabs(name):
        return f"must be a plain file name in the output folder (no folders, no absolute path), got {name!r}"
    if not name.lower().endswith(suffix) or len(name) <= len(suffix) or name.startswith("."):
        return f"must be a visible file name ending in {suffix}, got {name!r}"
    return None


def as_float_array(value: object, name: str) -> np.ndarray:
    """``value`` as a float64 array, or InputError if it is not real numbers (complex values, booleans and strings
    are refused: numpy would drop an imaginary part or read True as 1)."""
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError):  # ragged lists: np.asarray(value, dtype=float) below says so
        kind = "O"
    if kind in NOT_REAL:
        raise InputError(f"{name} must be real numbers, got {NOT_REAL[kind]} values {value!r:.80}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric, got {type(value).__name__} {value!r:.80}") from None
    return arr


NOT_REAL = {"c": "complex", "b": "boolean"}



def check_finite(arr: np.ndarray, name: str) -> np.ndarray:
    """Raise InputError naming the first bad entry if ``arr`` holds NaN or inf."""
    if np.isfinite(arr).all():
        return arr
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{name} contains NaN or inf (first at index {idx}, value {arr[idx]})")
    return arr


def as_vectors(value: object, name: str, size: int) -> np.ndarray:
    """A finite array of shape (..., size). ``size`` names the required last dimension."""
    arr = as_float_array(value, name)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise InputError(f"{name} must have shape (..., {size}), got shape {arr.shape}")
    return check_finite(arr, name)


def as_point(value: object, name: str) -> np.ndarray:
    """One finite point (3,) [m]; InputError naming ``name`` otherwise."""
    arr = as_float_array(value, name)
    if arr.shape != (3,):
        raise InputError(f"{name} must be one point of shape (3,), got shape {arr.shape}")
    return check_finite(arr, name)


def unit_quaternions(quat: np.ndarray) -> np.ndarray:
    """Finite (w, x, y, z) quaternions (..., 4) divided by their norm without over- or underflow (each row is
    scaled by its largest entry first, so 1e200 and 1e-200 entries keep their direction); zero rows stay zero."""
    quat = np.asarray(quat, dtype=float)
    scale = np.abs(quat).max(axis=-1, keepdims=True)
    quat = quat / np.where(scale > 0.0, scale, 1.0)
    norm = np.sqrt((quat * quat).sum(axis=-1, keepdims=True))
    return quat / np.where(norm > 0.0, norm, 1.0)


def has_zero_quaternion(quat: np.ndarray) -> bool:
    """Whether any (w, x, y, z) row of shape (..., 4) is all zeros (the one quaternion with no rotation)."""
    return bool((np.abs(np.asarray(quat, dtype=float)).max(axis=-1) == 0.0).any())


def as_quaternions(value: object, name: str) -> np.ndarray:
    """Finite (w, x, y, z) quaternions of shape (..., 4), normalised; zero norm is an error."""
    quat = as_vectors(value, name, 4)
    if has_zero_quaternion(quat):
        raise InputError(f"{name} contains a zero quaternion; give (w, x, y, z) with nonzero norm")
    return unit_quaternions(quat)


def as_rotation_matrices(value: object, name: str) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of finite (w, x, y, z) quaternions (..., 4), normalised first; zero norm
    is an error. One compiled pass: the validation and the conversion of a pose target."""
    quat = as_vectors(value, name, 4)
    rot, smallest = quat_to_matrix_batch(np.ascontiguousarray(quat.reshape(-1, 4)))
    if smallest == 0.0:
        raise InputError(f"{name} contains a zero quaternion; give (w, x, y, z) with nonzero norm")
    return rot.reshape(quat.shape[:-1] + (3, 3))


def as_mask(value: Sequence[bool], name: str) -> np.ndarray:
    """A boolean mask of length 3."""
    arr = np.asarray(value) if not isinstance(value, str) else np.asarray(None)
    if arr.shape != (3,) or arr.dtype.kind not in "biuf" or not (arr.dtype == bool or ((arr == 0) | (arr == 1)).all()):
        raise InputError(f"{name} must be 3 booleans (x, y, z), got {value!r}")
    return arr.astype(bool)


def as_rot_mask(value: Sequence[bool], name: str = "rot_mask") -> np.ndarray:
    """A rotation mask: 3 booleans aligning 0 link axes, 1 or all 3 (Genesis's rule: aligning two fixes the
    third, so a mask of two is a mistake)."""
    mask = as_mask(value, name)
    if int(mask.sum()) == 2:
        raise InputError(f"{name} {mask.tolist()}: align 0 axes, 1 axis or all 3 (as in Genesis), not 2")
    return mask


def plain_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a column, a report key or a file stem (None when it can): it must be a non-empty
    string without slashes, control characters or surrounding spaces."""
    if isinstance(name, str) and name.strip() == name != "" and not any(c in name for c in "/\\") \
            and all(c.isprintable() for c in name):
        return None
    return f"must be a plain name (no slashes, control characters or surrounding spaces), got {name!r}"


MAX_SEED = 2**32 - 1  # numpy's and OMPL's seeds are unsigned 32-bit


def seed_problem(seed: object) -> str | None:
    """Why ``seed`` is not a random seed (None when it is): an integer in [0, 2**32 - 1]."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= seed <= MAX_SEED:
        return None
    return f"must be an integer in [0, {MAX_SEED}], got {seed!r}"


@njit(cache=True)
def quat_to_matrix_batch(quat):
    """(N, 4) (w, x, y, z), normalised here (scaled by the largest entry first, so that huge or tiny ones stay
    finite) -> ((N, 3, 3) rotation matrices, the smallest largest-entry seen); a zero quaternion gives the
    identity (callers refuse it by the returned value, 0)."""
    out = np.empty((quat.shape[0], 3, 3))
    smallest = np.inf
    for i in range(quat.shape[0]):
        m = max(abs(quat[i, 0]), abs(quat[i, 1]), abs(quat[i, 2]), abs(quat[i, 3]))
        smallest = min(smallest, m)
        if m == 0.0:
            m = 1.0
        w, x, y, z = quat[i, 0] / m, quat[i, 1] / m, quat[i, 2] / m, quat[i, 3] / m
        n2 = w * w + x * x + y * y + z * z
        s = 1.0 / n2 if n2 > 0.0 else 0.0
        out[i, 0, 0] = 1 - 2 * s * (y * y + z * z)
        out[i, 0, 1] = 2 * s * (x * y - w * z)
        out[i, 0, 2] = 2 * s * (x * z + w * y)
        out[i, 1, 0] = 2 * s * (x * y + w * z)
        out[i, 1, 1] = 1 - 2 * s * (x * x + z * z)
        out[i, 1, 2] = 2 * s * (y * z - w * x)
        out[i, 2, 0] = 2 * s * (x * z - w * y)
        out[i, 2, 1] = 2 * s * (y * z + w * x)
        out[i, 2, 2] = 1 - 2 * s * (x * x + y * y)
    return out, smallest
