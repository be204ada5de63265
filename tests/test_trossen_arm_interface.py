"""app.trossen_arm against the real ``trossen_arm`` package (1.11.0, the test extra), by inspection only: every
public name of the module, of each class (nested classes too), each method's parameter names and defaults, each
enum's members and values, the name maps' contents. Nothing of the real package is called but its constructors
of plain structs and its docstrings: never ``configure``, which would connect to the arm's network address.

The real package is pybind11: its signatures are read from each function's docstring first line
("name(self: T, a: int, b: float = 2.0) -> None"); an overloaded function lists its overloads after
"Overloaded function.", and ours must accept each overload's parameter names."""

from __future__ import annotations

import inspect
import re

import pytest

import app.trossen_arm as ours
from app.errors import AppError

real = pytest.importorskip("trossen_arm", reason="the real trossen_arm package is not installed (pip install "
                           "'.[test]' installs trossen-arm==1.11.0)")

# public names of the real package left out on purpose (name -> why); none today
LEFT_OUT: dict[str, str] = {}
# members of the real classes that ours leaves out on purpose ("Class.member" -> why)
LEFT_OUT_MEMBERS: dict[str, str] = {}
# members ours has that the real classes have not (kept out of the comparison, with why)
OURS_ONLY = {
    "ArrayDouble3.SIZE": "the fixed length, a class constant of our implementation",
    "ArrayDouble6.SIZE": "the fixed length, a class constant of our implementation",
    "ArrayDouble9.SIZE": "the fixed length, a class constant of our implementation",
}


def _real_names() -> set[str]:
    """The real package's public names (it re-exports its extension module's; submodules aside)."""
    return {n for n in dir(real) if not n.startswith("_") and not inspect.ismodule(getattr(real, n))}

_SIG = re.compile(r"^(?:\d+\. )?(\w+)\((.*)\) -> .*$")


def _split_params(text: str) -> list[str]:
    """'a: int, b: list[int] = [1, 2]' -> ['a: int', 'b: list[int] = [1, 2]'] (commas inside brackets kept)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[({"
        depth -= ch in "])}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def _real_signatures(func) -> list[list[tuple[str, str | None]]]:
    """Each overload's [(name, default text or None)] from a pybind11 docstring, self dropped."""
    lines = [ln.strip() for ln in (func.__doc__ or "").splitlines()]
    sigs = []
    for line in lines:
        m = _SIG.match(line)
        if m and m.group(1) == func.__name__:
            params = []
            for p in _split_params(m.group(2)):
                name, _, rest = p.partition(":")
                default = rest.split("=", 1)[1].strip() if "=" in rest else None
                if name.strip() != "self":
                    params.append((name.strip(), default))
            sigs.append(params)
    return sigs


def _our_signature(func) -> list[tuple[str, str | None]]:
    params = list(inspect.signature(func).parameters.values())
    out = []
    for p in params:
        if p.name == "self":
            continue
        default = None if p.default is inspect.Parameter.empty else p.default
        out.append((p.name, None if p.default is inspect.Parameter.empty else _text(default)))
    return out


def _text(value) -> str:
    """A default as pybind11 prints it: enums 'Mode.idle', strings quoted, numbers and None as repr."""
    if isinstance(value, ours.Mode | ours.IPMethod | ours.InterpolationSpace | ours.Model):
        return str(value)
    return repr(value)


def _public(cls) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def _is_enum(cls) -> bool:
    return hasattr(cls, "__members__")


def _compare_class(path: str, real_cls, our_cls, problems: list[str]) -> None:
    if _is_enum(real_cls):
        real_members = {k: int(v) for k, v in real_cls.__members__.items()}
        our_members = {k: int(v) for k, v in our_cls.__members__.items()}
        if real_members != our_members:
            problems.append(f"{path}: members {our_members} != real {real_members}")
        return
    real_names = _public(real_cls) - {m.split(".", 1)[1] for m in LEFT_OUT_MEMBERS if m.startswith(path + ".")}
    our_names = _public(our_cls) - {m.split(".", 1)[1] for m in OURS_ONLY if m.startswith(path + ".")}
    if real_names - our_names:
        problems.append(f"{path}: missing {sorted(real_names - our_names)}")
    if our_names - real_names:
        problems.append(f"{path}: not in the real class {sorted(our_names - real_names)}")
    for name in sorted(real_names & our_names):
        r, o = inspect.getattr_static(real_cls, name), getattr(our_cls, name)
        if isinstance(r, type):
            _compare_class(f"{path}.{name}", r, o, problems)
        elif callable(getattr(real_cls, name)) and not isinstance(r, property):
            _compare_function(f"{path}.{name}", getattr(real_cls, name), o, problems)


def _compare_function(path: str, real_func, our_func, problems: list[str]) -> None:
    overloads = _real_signatures(real_func)
    if not overloads:
        problems.append(f"{path}: no signature in the real docstring")
        return
    ours_sig = _our_signature(our_func)
    if len(overloads) == 1 and ours_sig != overloads[0]:
        problems.append(f"{path}: ours {ours_sig} != real {overloads[0]}")
    elif len(overloads) > 1:  # an overloaded function: ours takes each overload's parameters by name
        names = [p[0] for p in ours_sig]
        for overload in overloads:
            if not all(n in names for n, _ in overload):
                problems.append(f"{path}: ours {ours_sig} does not take overload {overload}")


def test_every_public_name_of_the_real_package_is_ours_or_left_out_with_a_reason():
    """Module level: the real __all__ and ours hold the same names (less LEFT_OUT)."""
    assert _real_names() - set(LEFT_OUT) == set(ours.__all__)
    assert all(hasattr(ours, name) for name in ours.__all__)


def test_every_class_method_signature_and_default_matches_the_real_package():
    """Each class's public members, each method's parameter names and defaults, each enum's members."""
    problems: list[str] = []
    for name in sorted(_real_names() - set(LEFT_OUT)):
        r, o = getattr(real, name), getattr(ours, name)
        if isinstance(r, type) and not issubclass(r, BaseException):
            _compare_class(name, r, o, problems)
    assert problems == []


def test_the_name_maps_hold_the_real_keys_and_texts():
    """ERROR_INFORMATION, MODEL_NAME and MODE_NAME: the same keys (by value) and the same strings."""
    for name in ("ERROR_INFORMATION", "MODEL_NAME", "MODE_NAME"):
        real_map = {int(k): v for k, v in getattr(real, name).items()}
        our_map = {int(k): v for k, v in getattr(ours, name).items()}
        assert our_map == real_map, name


def test_the_exceptions_derive_from_the_real_bases_and_our_root():
    """RuntimeError and LogicError: the builtin bases of the real ones (RuntimeError, AssertionError), and
    app.errors.AppError."""
    assert issubclass(ours.RuntimeError, RuntimeError) and issubclass(real.RuntimeError, RuntimeError)
    assert issubclass(ours.LogicError, AssertionError) and issubclass(real.LogicError, AssertionError)
    assert issubclass(ours.RuntimeError, AppError) and issubclass(ours.LogicError, AppError)


def test_the_standard_end_effectors_carry_the_real_figures():
    """Every StandardEndEffector variant: palm and finger masses, finger offsets, pitch circle radius and tool
    frame as the real package reports them (read from its class attributes, nothing connected)."""
    for name in (n for n in dir(real.StandardEndEffector) if not n.startswith("_")):
        r, o = getattr(real.StandardEndEffector, name), getattr(ours.StandardEndEffector, name)
        got = (o.palm.mass, o.finger_left.mass, o.offset_finger_left, o.offset_finger_right, o.pitch_circle_radius,
               *o.t_flange_tool)
        want = (r.palm.mass, r.finger_left.mass, r.offset_finger_left, r.offset_finger_right, r.pitch_circle_radius,
                *r.t_flange_tool)
        assert got == pytest.approx(want, abs=1e-6), name


def test_a_fresh_driver_answers_as_the_real_one_before_configure():
    """Before configure (the real one's constructor connects to nothing): not configured, 0 joints, empty
    positions, and a LogicError with the same message from a command."""
    r, o = real.TrossenArmDriver(), ours.TrossenArmDriver()
    assert (o.get_is_configured(), o.get_num_joints(), list(o.get_all_positions())) == \
           (r.get_is_configured(), r.get_num_joints(), list(r.get_all_positions()))
    with pytest.raises(real.LogicError) as want:
        r.set_all_modes(real.Mode.position)
    with pytest.raises(ours.LogicError) as got:
        o.set_all_modes(ours.Mode.position)
    assert str(got.value) == str(want.value)
