"""The driver's list types: ``VectorDouble`` (a growable list of floats) and ``ArrayDouble3/6/9`` (fixed length).

As the real package's pybind11 bindings: indexing (a slice gives a numpy array for the fixed arrays, a
VectorDouble for VectorDouble), item assignment, iteration, ``len``, ``==``, ``count``; numpy takes them as
arrays (``np.array(v)``, ``ndarray - v``). Values are stored as Python floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from app.errors import InputError


class _Doubles:
    """Shared behaviour of the float containers (``_values``: a list of floats)."""

    __hash__ = None  # type: ignore[assignment]  # mutable, as the real ones

    def __init__(self, values: Iterable | None = None):
        if values is None:
            self._values = []
        elif isinstance(values, np.ndarray):  # the driver's own outputs: one conversion, not one per value
            self._values = values.astype(float).ravel().tolist()
        else:
            self._values = [float(x) for x in values]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.array(self._values, dtype=dtype or float)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __contains__(self, x: float) -> bool:
        return float(x) in self._values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and self._values == other._values

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __iter__(self) -> Iterator[float]:
        return iter(list(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}[{', '.join(f'{x:g}' for x in self._values)}]"

    def count(self, x: float) -> int:
        """Return the number of times ``x`` appears in the list."""
        return self._values.count(float(x))


class VectorDouble(_Doubles):
    """A list of floats (``std::vector<double>``)."""

    def __getitem__(self, i):
        if isinstance(i, slice):
            return VectorDouble(self._values[i])
        return self._values[i]

    def __setitem__(self, i, x) -> None:
        if isinstance(i, slice):
            self._values[i] = [float(v) for v in x]
        else:
            self._values[i] = float(x)

    def __delitem__(self, i) -> None:
        del self._values[i]

    def append(self, x: float) -> None:
        """Add an item to the end of the list."""
        self._values.append(float(x))

    def clear(self) -> None:
        """Clear the contents."""
        self._values.clear()

    def extend(self, L: Iterable) -> None:
        """Extend the list by appending all the items in the given list."""
        self._values.extend(float(x) for x in L)

    def insert(self, i: int, x: float) -> None:
        """Insert an item at a given position."""
        self._values.insert(i, float(x))

    def pop(self, i: int = -1) -> float:
        """Remove and return the item at index ``i`` (the last by default)."""
        return self._values.pop(i)

    def remove(self, x: float) -> None:
        """Remove the first item from the list whose value is x."""
        self._values.remove(float(x))


class _FixedDoubles(_Doubles):
    """A fixed-length array of floats (``std::array<double, N>``), zeros by default."""

    SIZE = 0

    def __init__(self, values: Iterable | None = None):
        super().__init__([0.0] * self.SIZE if values is None else values)
        if len(self._values) != self.SIZE:
            raise InputError(f"{type(self).__name__} takes {self.SIZE} values, got {len(self._values)}")

    def __getitem__(self, i):
        if isinstance(i, slice):
            return np.array(self._values[i])
        return self._values[i]

    def __setitem__(self, i, x) -> None:
        if isinstance(i, slice):
            new = list(self._values)
            new[i] = [float(v) for v in np.asarray(x, dtype=float).ravel()]
            if len(new) != self.SIZE:
                raise InputError(f"{type(self).__name__} keeps {self.SIZE} values")
            self._values = new
        else:
            self._values[i] = float(x)


class ArrayDouble3(_FixedDoubles):
    """Three floats (xyz, rpy)."""

    SIZE = 3


class ArrayDouble6(_FixedDoubles):
    """Six floats (a pose as translation + angle-axis, a twist, a wrench)."""

    SIZE = 6


class ArrayDouble9(_FixedDoubles):
    """Nine floats (a 3x3 inertia, row major)."""

    SIZE = 9


def doubles(values: object, n: int | None, what: str) -> np.ndarray:
    """``values`` (any sequence, numpy array or container above) as a float array; ``n``: the length required
    (None: any). Raises the driver's size error text through ``InputError`` (the caller converts)."""
    arr = np.asarray(list(values) if isinstance(values, _Doubles) else values, dtype=float).ravel()
    if n is not None and arr.size != n:
        raise InputError(f"Invalid {what} size: expected {n}, got {arr.size}")
    return arr
