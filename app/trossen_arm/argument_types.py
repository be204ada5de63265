"""The driver's arguments converted as the real package's pybind11 bindings convert them, or a ``TypeError``.

The real ``trossen_arm`` is C++ behind pybind11: a call whose arguments its casters cannot convert raises
``TypeError: NAME(): incompatible function arguments`` before any work, whatever the values. The casters' rules
(pybind11's defaults, arguments in convert mode), by the annotation of our method's parameter:

- ``float``: anything with ``__float__`` or ``__index__`` (int, bool, numpy numbers, a 0-d array); not str/bytes
  or an array of one or more dimensions;
- ``int``: anything with ``__index__`` or ``__int__`` (int, bool, numpy numbers but float64); never a float;
- ``bool``: None or anything whose ``__bool__`` answers (numbers, a 0-d or one-value array); not str, list,
  an enum or an array of several values;
- ``str``: str or bytes;
- ``VectorDouble``, ``ArrayDouble6`` (the bindings' opaque float lists): an instance, a list of floats or a 1-D
  float64 array; not a tuple, a range or an array of another dtype; an ``ArrayDouble6`` not more than 6 values;
- ``Sequence[X]`` (``std::vector<X>``): a sequence or an iterator (taken as a list), not str/bytes, each item an X;
- an enum or a bound class: an instance of it (no int for an enum);
- ``X | None``: None or X.

``pybind_checked(cls)`` wraps every public method of the class with its check; the values (finite, in range,
lengths) stay with the methods, which raise the driver's own errors.
"""

from __future__ import annotations

import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

from app.trossen_arm.containers import ArrayDouble6, VectorDouble

Check = Callable[[object], bool]
FLOAT_CONTAINERS = (VectorDouble, ArrayDouble6)


def _is_float(v: object) -> bool:
    t = type(v)
    if isinstance(v, (str, bytes)) or (isinstance(v, np.ndarray) and v.ndim > 0):
        return False
    return hasattr(t, "__float__") or hasattr(t, "__index__")


def _is_int(v: object) -> bool:
    if isinstance(v, (float, str, bytes)) or (isinstance(v, np.ndarray) and v.ndim > 0):
        return False
    return hasattr(type(v), "__index__") or hasattr(type(v), "__int__")


def _is_bool(v: object) -> bool:
    if v is None:
        return True
    if isinstance(v, enum.Enum) or not hasattr(type(v), "__bool__"):
        return False
    try:
        bool(v)  # as the caster: a failing __bool__ (an array of several values) is a mismatch
    except (TypeError, ValueError):
        return False
    return True


def _is_str(v: object) -> bool:
    return isinstance(v, (str, bytes))


def _float_container(cls: type) -> Check:
    """An opaque float container of the bindings (VectorDouble, ArrayDouble6): an instance, a list of
    floats, or a 1-D float64 array (never a tuple, another container or another dtype); a fixed-size one
    refuses more values than its size (fewer reach the method, which raises its own error)."""
    most = getattr(cls, "SIZE", None)
    def check(v: object) -> bool:
        if isinstance(v, cls):
            return True
        if most is not None and isinstance(v, (list, np.ndarray)) and len(v) > most:
            return False
        if isinstance(v, list):
            return all(_is_float(x) for x in v)
        return isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype == np.float64
    return check


def _sequence_of(item: Check) -> Check:
    """``std::vector<X>``: any sequence but str/bytes, each item an X (an iterator is taken as a list first)."""
    def check(v: object) -> bool:
        return not isinstance(v, (str, bytes, Mapping)) and isinstance(v, Sequence) and all(item(x) for x in v)
    return check


def _mapping_of(key: Check) -> Check:
    return lambda v: isinstance(v, Mapping) and all(key(k) for k in v)


def checker(annotation: object) -> Check:
    """The pybind11 caster's acceptance test for a parameter annotated ``annotation`` (resolved)."""
    simple = {float: _is_float, int: _is_int, bool: _is_bool, str: _is_str, object: lambda v: True}
    if annotation in simple:
        return simple[annotation]
    if annotation in FLOAT_CONTAINERS:
        return _float_container(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [checker(a) for a in args if a is not type(None)]
        return lambda v: v is None or any(c(v) for c in options)
    if origin is not None and issubclass(origin, Mapping):
        return _mapping_of(checker(args[0]) if args else simple[object])
    if _is_vector(annotation):
        return _sequence_of(checker(args[0]) if args else simple[object])
    if isinstance(annotation, type):
        return lambda v: isinstance(v, annotation)
    raise TypeError(f"no pybind11 rule for the annotation {annotation!r}")


def _type_name(annotation: object) -> str:
    if annotation is None or annotation is type(None):
        return "None"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return f"trossen_arm.{annotation.__name__}"
    if isinstance(annotation, type):
        return f"trossen_arm.{annotation.__name__}" if annotation in FLOAT_CONTAINERS else annotation.__name__
    return str(annotation).replace("collections.abc.Sequence", "list").replace("app.trossen_arm.enums.", "")


def _is_vector(annotation: object) -> bool:
    origin = typing.get_origin(annotation)
    return annotation is Sequence or (origin is not None and issubclass(origin, Sequence))


def checked(func: Callable) -> Callable:
    """``func`` (a method) wrapped: its arguments bound and checked as pybind11 would, else TypeError."""
    sig = inspect.signature(func)
    hints = typing.get_type_hints(func)
    params = list(sig.parameters.values())[1:]
    checks = {p.name: checker(hints[p.name]) for p in params if p.name in hints}
    listed = {p.name for p in params if _is_vector(hints.get(p.name))}
    if not checks:
        return func
    shown = ", ".join(f"{p.name}: {_type_name(hints.get(p.name, object))}"
                      + ("" if p.default is inspect.Parameter.empty else f" = {p.default!r}") for p in params)

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError:
            bound = None
        else:
            for k, v in bound.arguments.items():  # pybind11 takes an iterator into a std::vector: a list here
                if k in listed and isinstance(v, Iterator):
                    bound.arguments[k] = list(v)
            args, kwargs = bound.args[1:], bound.kwargs
        if bound is None or not all(checks[k](v) for k, v in bound.arguments.items() if k in checks):
            invoked = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise TypeError(f"{func.__name__}(): incompatible function arguments. The following argument types are "
                            f"supported:\n    1. (self: trossen_arm.TrossenArmDriver, {shown}) -> "
                            f"{_type_name(hints.get('return', None))}\n\nInvoked with: "
                            f"<trossen_arm.TrossenArmDriver>, {invoked}") from None
        return func(self, *args, **kwargs)
    return wrapper


def pybind_checked(cls: type) -> type:
    """``cls`` with each public method (its own or inherited) checked by ``checked``."""
    for name in dir(cls):
        attr = inspect.getattr_static(cls, name)
        if not name.startswith("_") and inspect.isfunction(attr):
            setattr(cls, name, checked(attr))
    return cls
