"""The JSON report of a run and the tracking-error plot."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np

from app.runtime.outputs import write_atomic

log = logging.getLogger(__name__)

def write_json_atomic(path: Path, data: dict) -> Path:
    """Write JSON to ``path`` through a temporary file and a rename. A value that is not a finite number (JSON has
    none) is written as null, as an array's are, and named in a warning: the file is never invalid JSON."""
    bad: list[str] = []
    data = _finite(data, "", bad)
    if bad:
        log.warning("%s: %d values were not finite numbers and are written as null: %s", Path(path).name, len(bad),
                    ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""))

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, allow_nan=False, default=_jsonable)

    return write_atomic(path, ".json", write)


def _finite(value, key: str, bad: list[str]):
    """``value`` with every non-finite float (Python's or numpy's, in dicts, lists and tuples) as None, its key
    path added to ``bad``."""
    if isinstance(value, dict):
        return {k: _finite(v, f"{key}.{k}" if key else str(k), bad) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{key}[{i}]", bad) for i, v in enumerate(value)]
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        bad.append(key)
        return None
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
        bad.append(key)
    return value


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return np.where(np.isfinite(value), value, None).tolist() if value.dtype.kind == "f" else value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def plot_tracking(path: Path, t: np.ndarray, pos_err: np.ndarray, rot_err: np.ndarray, title: str,
                  arms: dict[str, np.ndarray] | None = None, phases: dict[str, np.ndarray] | None = None) -> Path:
    """PNG of :func:`tracking_figure` at ``path`` (atomically)."""
    return save_figure_atomic(tracking_figure(t, pos_err, rot_err, title, arms, phases), path)


def tracking_figure(t: np.ndarray, pos_err: np.ndarray, rot_err: np.ndarray, title: str,
                    arms: dict[str, np.ndarray] | None = None, phases: dict[str, np.ndarray] | None = None):
    """Position and rotation tracking error over time, one line per environment (t (n_ticks,), errors (n_ticks,
    n_envs) [m], [rad]); with ``arms`` (name -> that arm's end-effector position errors (n_ticks, n_envs)) the
    position panel has a colour per arm and the rotation panel, the worst of the arms, one colour; each panel's
    legend says what its colours are. ``phases`` (word -> environments in that phase at each tick (n_ticks,)): a
    third panel, stacked, for a motion with phases (a pick-and-place's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3 if phases else 2, 1, figsize=(7, 7 if phases else 5), sharex=True)
    n_envs = pos_err.shape[1]
    if arms:
        for k, (name, err) in enumerate(arms.items()):
            axes[0].plot(t, err * 1e3, lw=0.8, color=f"C{k}")[0].set_label(name)
        axes[0].legend(loc="upper right", fontsize=8, title="arm")
        axes[1].plot(t, np.degrees(rot_err), lw=0.8, color="0.35")[0].set_label(f"worst arm, {n_envs} env(s)")
        axes[1].legend(loc="upper right", fontsize=8)
    else:
        for ax, values in ((axes[0], pos_err * 1e3), (axes[1], np.degrees(rot_err))):
            _env_lines(ax, t, values)
    axes[0].set_ylabel("position error [mm]")
    axes[1].set_ylabel("rotation error [deg]")
    axes[-1].set_xlabel("time [s]")
    if phases:
        axes[2].stackplot(t, *phases.values(), labels=list(phases), alpha=0.8)
        axes[2].set_ylabel("environments")
        axes[2].legend(loc="upper left", fontsize=7, ncol=min(len(phases), 5))
        axes[2].set_ylim(0, pos_err.shape[1] * 1.35)  # room for the legend
    from matplotlib.ticker import FuncFormatter

    for ax, values in zip(axes[:2], (pos_err * 1e3, np.degrees(rot_err))):
        ax.set_yscale("symlog", linthresh=1e-2)
        finite = values[np.isfinite(values)]
        top = max(float(finite.max()) * 1.5 if finite.size else 0.0, 0.1)  # tiny errors: plain 0 .. 0.1 axis
        ax.set_ylim(0.0, top)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # plain labels, no offset notation
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title}: tracking error ({n_envs} env{'s' if n_envs > 1 else ''})")
    fig.tight_layout()
    return fig


def _env_lines(ax, t: np.ndarray, values: np.ndarray) -> None:
    """One line per environment: a colour and a legend entry each for up to 8, else one colour and one entry."""
    n = values.shape[1]
    if n <= 8:
        for e in range(n):
            ax.plot(t, values[:, e], lw=0.8, color=f"C{e}")[0].set_label(f"env {e}")
        ax.legend(loc="upper right", fontsize=7, ncol=min(n, 4))
    else:
        ax.plot(t, values, lw=0.8, color="C0", alpha=0.6)[0].set_label(f"{n} environments, one line each")
        ax.legend(loc="upper right", fontsize=8)


def save_figure_atomic(fig, path: Path) -> Path:
    """A matplotlib figure into the PNG ``path`` through a temporary file and a rename; the figure is closed."""
    import matplotlib.pyplot as plt

    try:
        return write_atomic(path, ".png", lambda tmp: fig.savefig(tmp, dpi=100))
    finally:
        plt.close(fig)
