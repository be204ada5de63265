"""End-effector trajectory files (what ``app.track`` reads) and joint trajectory files (what it writes): a table
of named columns as CSV with a header, NPZ (one array per column) or parquet.

An end-effector trajectory has ``t`` [s] (strictly increasing), the position ``x y z`` [m] and the orientation
``qw qx qy qz`` (normalised on reading) of each arm, and optionally ``gripper`` (0 open .. 1 closed). One arm:
plain names; several arms: every pose column prefixed with the arm's name and a dot (``left.x``, ``right.qw``).
Every problem is a :class:`~app.errors.DatasetError` naming the file and the column (and row where one is bad).
"""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from app.errors import DatasetError
from app.runtime.outputs import write_atomic
from app.validation import unit_quaternions

POSE_COLUMNS = ("x", "y", "z", "qw", "qx", "qy", "qz")
FORMATS = (".csv", ".npz", ".parquet")


class EETrajectory(NamedTuple):
    """Waypoints of one or several arms. t (n,) [s]; arms: names in file order (None: unprefixed, one arm);
    pos (n, n_arms, 3) [m]; quat (n, n_arms, 4) (w, x, y, z), unit; gripper (n, n_arms) or None (no column)."""

    t: np.ndarray
    arms: tuple[str | None, ...]
    pos: np.ndarray
    quat: np.ndarray
    gripper: np.ndarray | None


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise DatasetError(f"unknown trajectory format {suffix or '(no suffix)'!r}; allowed: {', '.join(FORMATS)}",
                           str(path))
    return suffix


def _float_column(path: Path, name: str, cells: list[str]) -> np.ndarray:
    out = np.empty(len(cells))
    for row, cell in enumerate(cells):
        try:
            out[row] = float(cell)
        except ValueError:
            raise DatasetError(f"column {name!r} row {row + 1}: {cell!r} is not a number", str(path)) from None
    return out


def _real_column(path: Path, name: str, values: np.ndarray) -> np.ndarray:
    """A column as (n_rows,) float: one real number a row (not a 2-D array, complex numbers, booleans or text)."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise DatasetError(f"column {name!r} has shape {values.shape}; a column holds one number a row (n,)",
                           str(path))
    if values.dtype.kind not in "iuf":
        raise DatasetError(f"column {name!r} holds {values.dtype} values; a column holds real numbers", str(path))
    return values.astype(float)


def _same_length(path: Path, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise DatasetError(f"columns have different lengths {sorted(lengths)}; every column one value a row",
                           str(path))
    return columns


def read_table(path: str | Path) -> dict[str, np.ndarray]:
    """A trajectory file's columns by name, each (n_rows,) float. Raises DatasetError."""
    path = Path(path)
    fmt = _format(path)
    if not path.is_file():
        raise DatasetError("file not found", str(path))
    try:
        if fmt == ".csv":
            with open(path, newline="") as f:
                rows = [r for r in csv.reader(f) if r and any(c.strip() for c in r)]
            if not rows:
                raise DatasetError("empty file; the first line must name the columns", str(path))
            header = [h.strip() for h in rows[0]]
            twice = sorted({h for h in header if header.count(h) > 1})
            if twice:
                raise DatasetError(f"column {twice[0]!r} is named twice in the header; every column once", str(path))
            bad = [k + 2 for k, r in enumerate(rows[1:]) if len(r) != len(header)]
            if bad:
                raise DatasetError(f"line {bad[0]}: {len(rows[bad[0] - 1])} cells for {len(header)} columns", str(path))
            return {h: _float_column(path, h, [r[i].strip() for r in rows[1:]]) for i, h in enumerate(header)}
        if fmt == ".npz":
            with np.load(path, allow_pickle=False) as data:
                return _same_length(path, {k: _real_column(path, k, data[k]) for k in data.files})
        table = pq.read_table(path)
        twice = sorted({n for n in table.column_names if table.column_names.count(n) > 1})
        if twice:
            raise DatasetError(f"column {twice[0]!r} appears twice; every column once", str(path))
        return {name: _real_column(path, name, table.column(name).to_numpy()) for name in table.column_names}
    except DatasetError:
        raise
    except (OSError, ValueError, TypeError, EOFError, zipfile.BadZipFile, pa.ArrowException) as exc:
        raise DatasetError(f"cannot read it as {fmt[1:]}: {exc}", str(path)) from None


def _arm_names(path: Path, columns: dict[str, np.ndarray], arm_names: list[str]) -> tuple[str | None, ...]:
    prefixed = sorted({c.split(".", 1)[0] for c in columns if "." in c})
    if not prefixed:
        return (None,)
    plain = [c for c in columns if c in POSE_COLUMNS]
    if plain:
        raise DatasetError(f"column {plain[0]!r} has no arm prefix while {prefixed} do; use one arm's plain names or "
                           f"prefix every arm's columns", str(path))
    unknown = [p for p in prefixed if p not in arm_names]
    if unknown:
        valid = arm_names or "none: the scene's robot has no named arms; use plain column names"
        raise DatasetError(f"column prefix {unknown[0]!r} is not an arm of the scene; arms: {valid}", str(path))
    return tuple(a for a in arm_names if a in prefixed)


def _checked(path: Path, columns: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in columns:
        raise DatasetError(f"column {name!r} is missing; a trajectory needs t, x, y, z, qw, qx, qy, qz (and optionally "
                           f"gripper), prefixed 'ARM.' per arm for several arms; found {sorted(columns)}", str(path))
    values = columns[name]
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise DatasetError(f"column {name!r} row {bad[0] + 1}: {values[bad[0]]} (values must be finite)", str(path))
    return values


def _gripper(path: Path, columns: dict[str, np.ndarray], name: str) -> np.ndarray:
    values = _checked(path, columns, name)
    bad = np.flatnonzero((values < 0) | (values > 1))
    if len(bad):
        raise DatasetError(f"column {name!r} row {bad[0] + 1}: {values[bad[0]]:g}; a gripper command is in [0, 1] "
                           "(0 open .. 1 closed)", str(path))
    return values


def _no_others(path: Path, columns: dict[str, np.ndarray], arms: tuple[str | None, ...]) -> None:
    """Every column is one the trajectory's arms read: a misspelt ``gripper`` would be ignored without a word."""
    known = {"t", *(c if a is None else f"{a}.{c}" for a in arms for c in (*POSE_COLUMNS, "gripper"))}
    others = sorted(c for c in columns if c not in known)
    if others:
        raise DatasetError(f"unknown column(s) {others[:5]}; a trajectory holds {sorted(known)} (drop the others)",
                           str(path))


def read_ee_trajectory(path: str | Path, arm_names: list[str] | None = None) -> EETrajectory:
    """Read and check an end-effector trajectory; ``arm_names``: the scene's arms (prefixes allowed)."""
    path = Path(path)
    columns = read_table(path)
    arms = _arm_names(path, columns, list(arm_names or []))
    t = _checked(path, columns, "t")
    if len(t) < 2:
        raise DatasetError(f"column 't' has {len(t)} row(s); a trajectory needs at least 2", str(path))
    back = np.flatnonzero(np.diff(t) <= 0)
    if len(back):
        k = back[0] + 1
        raise DatasetError(f"column 't' must increase strictly: row {k + 1} (t={t[k]}) follows t={t[k - 1]}", str(path))
    _no_others(path, columns, arms)
    pos, quat, grip = [], [], []
    for arm in arms:
        key = (lambda c: c) if arm is None else (lambda c, a=arm: f"{a}.{c}")
        pos.append(np.stack([_checked(path, columns, key(c)) for c in POSE_COLUMNS[:3]], axis=1))
        q = np.stack([_checked(path, columns, key(c)) for c in POSE_COLUMNS[3:]], axis=1)
        zero = np.abs(q).max(axis=1) == 0.0
        if zero.any():
            raise DatasetError(f"column {key('qw')!r} row {np.argmax(zero) + 1}: the quaternion is zero", str(path))
        quat.append(unit_quaternions(q))
        grip.append(_gripper(path, columns, key("gripper")) if key("gripper") in columns else None)
    gripper = None if all(g is None for g in grip) else np.stack(
        [np.full(len(t), np.nan) if g is None else g for g in grip], axis=1)
    return EETrajectory(t, arms, np.stack(pos, axis=1), np.stack(quat, axis=1), gripper)


def write_table(path: str | Path, columns: dict[str, np.ndarray]) -> Path:
    """``columns`` (name -> (n,) values) as CSV, NPZ or parquet by the suffix, atomically. Returns the path."""
    path = Path(path)
    fmt = _format(path)
    names = list(columns)
    data = np.stack([np.asarray(columns[n], dtype=float) for n in names], axis=1)

    def write(tmp: str) -> None:
        if fmt == ".csv":
            np.savetxt(tmp, data, delimiter=",", header=",".join(names), comments="", fmt="%.10g")
        elif fmt == ".npz":
            with open(tmp, "wb") as f:
                np.savez(f, **{n: data[:, i] for i, n in enumerate(names)})
        else:
            pq.write_table(pa.table({n: data[:, i] for i, n in enumerate(names)}), tmp)
    return write_atomic(path, fmt, write)
