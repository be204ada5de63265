"""app.trossen_arm's argument types against the real ``trossen_arm`` package's pybind11 bindings.

Both drivers are made and never configured (the real ``configure`` would open a connection, and ``discover`` scans
the network: neither is called). pybind11 checks a call's argument types before the C++ body runs, so an
unconfigured real driver still answers "would these types be accepted": ``TypeError`` if not, its "not configured"
error (or another of the body's) if they would. Each public method with parameters of the kinds below gets each
probe value in each parameter, the others valid, and ours must raise ``TypeError`` exactly where the real one does.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Sequence

import numpy as np
import pytest

import app.trossen_arm as ours
from app.trossen_arm.argument_types import FLOAT_CONTAINERS

real = pytest.importorskip("trossen_arm", reason="the real trossen_arm package is not installed (pip install "
                           "'.[test]' installs trossen-arm==1.11.0)")

NEVER_CALLED = {"configure": "opens a connection", "discover": "scans the network"}


class OnlyFloat:
    def __float__(self) -> float:
        return 1.0


class OnlyIndex:
    def __index__(self) -> int:
        return 1


class OnlyBool:
    def __bool__(self) -> bool:
        return True


def _probes(mode) -> dict[str, object]:
    """Values of many types (fresh each call: a generator is used up by one call)."""
    return {
        "int": 1, "float": 1.0, "bool": True, "np.float64": np.float64(1), "np.float32": np.float32(1),
        "np.int64": np.int64(1), "np.bool_": np.bool_(True), "str": "1", "bytes": b"1", "None": None,
        "complex": 1j, "0-d array": np.array(1.0), "1-element array": np.array([1.0]), "__float__ only": OnlyFloat(),
        "__index__ only": OnlyIndex(), "__bool__ only": OnlyBool(), "list of 7 floats": [0.0] * 7,
        "list of 7 ints": [0] * 7, "list of 6 floats": [0.0] * 6, "tuple of 7 floats": (0.0,) * 7,
        "float64 array of 7": np.zeros(7), "float32 array of 7": np.zeros(7, np.float32),
        "int array of 7": np.zeros(7, int), "2-D array": np.zeros((7, 1)), "float64 array of 6": np.zeros(6),
        "range": range(7), "list of str": ["a"] * 7, "list of None": [None] * 7, "set": {1.0}, "dict": {0: 1.0},
        "a mode": mode, "list of modes": [mode] * 7, "tuple of modes": (mode,) * 7,
        "generator of modes": (mode for _ in range(7)), "list of ints for modes": [0] * 7,
    }


def _valid(annotation, lib):
    """A value of ``annotation``'s type from ``lib`` (ours or the real package)."""
    if annotation in (float, int, bool):
        return annotation(0)
    if annotation is str:
        return "x"
    if annotation in FLOAT_CONTAINERS:
        return [0.0] * (6 if annotation.__name__ == "ArrayDouble6" else 7)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return getattr(getattr(lib, annotation.__name__), next(iter(annotation)).name)
    args = typing.get_args(annotation)
    if type(None) in args:
        return None
    if typing.get_origin(annotation) is not None and args and isinstance(args[0], type) \
            and issubclass(args[0], enum.Enum):
        return [_valid(args[0], lib)] * 7
    raise LookupError(annotation)


def _methods() -> list[tuple[str, list[str], dict]]:
    """(name, parameter names, hints) of each public method whose every parameter ``_valid`` can fill."""
    out = []
    for name in sorted(dir(ours.TrossenArmDriver)):
        func = getattr(ours.TrossenArmDriver, name)
        if name.startswith("_") or name in NEVER_CALLED or not callable(func):
            continue
        params = list(inspect.signature(func).parameters)[1:]
        hints = typing.get_type_hints(func)
        try:
            [_valid(hints[p], ours) for p in params]
        except (LookupError, KeyError):
            continue
        if params:
            out.append((name, params, hints))
    return out


def _type_error(call) -> bool:
    try:
        call()
    except TypeError:
        return True
    except Exception:  # noqa: BLE001 - any other error means the types were accepted and the body ran
        return False
    return False


def test_the_probe_covers_the_command_methods():
    names = {m[0] for m in _methods()}
    assert {"set_all_positions", "set_cartesian_positions", "get_joint_position", "set_joint_modes", "cleanup",
            "set_gripper_position", "set_position_offsets", "set_dns", "set_all_modes"} <= names


@pytest.mark.parametrize("name,params,hints", _methods(), ids=[m[0] for m in _methods()])
def test_each_argument_type_is_refused_exactly_where_the_real_bindings_refuse_it(name, params, hints):
    r_drv, o_drv = real.TrossenArmDriver(), ours.TrossenArmDriver()
    differences = []
    for i, param in enumerate(params):
        for label in _probes(None):
            r_args = [_valid(hints[p], real) for p in params]
            o_args = [_valid(hints[p], ours) for p in params]
            r_args[i], o_args[i] = _probes(real.Mode.idle)[label], _probes(ours.Mode.idle)[label]
            r = _type_error(lambda: getattr(r_drv, name)(*r_args))
            o = _type_error(lambda: getattr(o_drv, name)(*o_args))
            if r != o:
                differences.append(f"{param}={label}: real {'refuses' if r else 'accepts'}, "
                                   f"ours {'refuses' if o else 'accepts'}")
    assert not differences, f"{name}: " + "; ".join(differences)


@pytest.mark.parametrize("args", [
    (0, "wxai_v0_base", "192.168.1.2", False),
    (ours.Model.wxai_v0, None, "192.168.1.2", False),
    (ours.Model.wxai_v0, "wxai_v0_base", 1921681, False),
    (ours.Model.wxai_v0, "wxai_v0_base", "192.168.1.2", "yes"),
    (ours.Model.wxai_v0, "wxai_v0_base", "192.168.1.2", False, "20"),
], ids=["model as int", "end effector None", "ip as int", "clear_error as str", "timeout as str"])
def test_configure_refuses_wrong_types_with_a_type_error_before_any_arm_is_taken(args):
    ee = ours.StandardEndEffector.wxai_v0_base
    args = tuple(ee if a == "wxai_v0_base" else a for a in args)
    drv = ours.TrossenArmDriver()
    with pytest.raises(TypeError, match=r"configure\(\): incompatible function arguments"):
        drv.configure(*args)
    assert not drv.get_is_configured()


def test_a_type_error_names_the_method_its_signature_and_what_it_was_given():
    with pytest.raises(TypeError) as err:
        ours.TrossenArmDriver().set_all_positions("abcdefg", 1.0, True)
    text = str(err.value)
    assert "set_all_positions(): incompatible function arguments" in text
    assert "goal_positions: trossen_arm.VectorDouble, goal_time: float = 2.0, blocking: bool = True" in text
    assert "Invoked with: <trossen_arm.TrossenArmDriver>, 'abcdefg', 1.0, True" in text


def test_a_generator_of_modes_is_taken_as_the_list_it_yields():
    drv = ours.TrossenArmDriver()
    with pytest.raises(Exception) as err:  # not configured: the types passed
        drv.set_joint_modes(ours.Mode.idle for _ in range(7))
    assert not isinstance(err.value, TypeError)


def test_sequence_annotations_left_are_mode_or_struct_lists_not_floats():
    """Every float list of the driver is an opaque container (VectorDouble or ArrayDouble6), as the bindings'."""
    for name in dir(ours.TrossenArmDriver):
        func = getattr(ours.TrossenArmDriver, name)
        if name.startswith("_") or not callable(func):
            continue
        for hint in typing.get_type_hints(func).values():
            for arg in (hint, *typing.get_args(hint)):
                if typing.get_origin(arg) is not None and issubclass(typing.get_origin(arg), Sequence):
                    assert typing.get_args(arg) != (float,), name
