"""Atomic writes of a dataset's files (JSON, parquet) and the schema metadata other readers expect; reads of
them that name the file when it is missing or damaged.

Every file is written beside its target under a temporary name and renamed into place, so a reader sees
either the old file or the new one, never a half-written one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from app.errors import DatasetError
from app.runtime.outputs import write_atomic

# lerobot's parquet feature types ("datasets" library Features) for the columns we write
_HF_SCALAR = {"float32": "float32", "int64": "int64"}


def write_json(path: Path, data: dict) -> None:
    """``data`` as indented JSON at ``path``, atomically."""
    text = json.dumps(data, indent=4)
    write_atomic(path, ".json", lambda tmp: Path(tmp).write_text(text))


def write_parquet(path: Path, tables: list[pa.Table]) -> None:
    """``tables`` (one schema) as consecutive row groups of one parquet file at ``path``, atomically."""
    def write(tmp: str) -> None:
        with pq.ParquetWriter(tmp, tables[0].schema) as writer:
            for table in tables:
                writer.write_table(table)
    write_atomic(path, ".parquet", write)


def hf_features_metadata(columns: dict[str, tuple[str, int | None]]) -> dict[bytes, bytes]:
    """The ``huggingface`` schema metadata lerobot's files carry: column -> (dtype, vector length or None)."""
    features = {}
    for name, (dtype, length) in columns.items():
        value = {"dtype": _HF_SCALAR[dtype], "_type": "Value"}
        features[name] = value if length is None else {"feature": value, "length": length, "_type": "List"}
    return {b"huggingface": json.dumps({"info": {"features": features}}).encode()}


def pandas_index_metadata(index_column: str, columns: dict[str, str]) -> dict[bytes, bytes]:
    """The ``pandas`` schema metadata that makes ``pandas.read_parquet`` use ``index_column`` (strings) as the
    frame's unnamed index; ``columns`` are the other columns and their numpy dtypes."""
    described = [{"name": name, "field_name": name, "pandas_type": dtype, "numpy_type": dtype, "metadata": None}
                 for name, dtype in columns.items()]
    described.append({"name": None, "field_name": index_column, "pandas_type": "unicode", "numpy_type": "object",
                      "metadata": None})
    meta = {"index_columns": [index_column],
            "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
                                "metadata": {"encoding": "UTF-8"}}],
            "columns": described, "creator": {"library": "pyarrow", "version": pa.__version__},
            "pandas_version": "2.0.0"}
    return {b"pandas": json.dumps(meta).encode()}


def read_json(path: Path) -> dict:
    """A JSON object file, or DatasetError naming it."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetError(f"not a readable JSON file ({exc})", str(path)) from None
    if not isinstance(data, dict):
        raise DatasetError(f"holds a JSON {type(data).__name__}, not an object", str(path))
    return data


def read_parquet(path: Path, columns: list[str] | None = None):
    """A parquet table, or DatasetError naming the file (missing, truncated, other columns)."""
    try:
        return pq.read_table(path, columns=columns)
    except FileNotFoundError:
        raise DatasetError("missing (the dataset's metadata names it)", str(path)) from None
    except Exception as exc:  # pyarrow raises ArrowInvalid, ArrowIOError, KeyError... for a damaged file
        raise DatasetError(f"not a readable parquet file ({str(exc).splitlines()[0][:200]})", str(path)) from None
