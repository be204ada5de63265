"""Per-step, per-environment telemetry: tracking errors, QP status, active constraints, stalls."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from app.kernels.dispatch import kernel_array


@njit(cache=True)
def _stall_update(err_buf, target_buf, k, err, target_pos, err_tol, progress, static_tol, stalled):
    """StallDetector.update's step compiled (one call instead of a dozen small numpy ones a tick): row k of the
    ring buffers err_buf (window, n_envs), target_buf (window, n_envs, 3) set, stalled (n_envs,) written."""
    window = err_buf.shape[0]
    i, oldest = k % window, (k + 1) % window
    err_buf[i, :] = err
    target_buf[i, :, :] = target_pos
    full = k + 1 >= window
    for e in range(err.shape[0]):
        m0 = target_buf[i, e, 0] - target_buf[oldest, e, 0]
        m1 = target_buf[i, e, 1] - target_buf[oldest, e, 1]
        m2 = target_buf[i, e, 2] - target_buf[oldest, e, 2]
        static = np.sqrt(m0 * m0 + m1 * m1 + m2 * m2) <= static_tol
        stalled[e] = full and static and err[e] > err_tol and err[e] > (1.0 - progress) * err_buf[oldest, e]


class StallDetector:
    """Flags environments whose static target is not being reached and whose error stopped falling.

    A stall: the target moved less than ``static_tol`` [m] over the window, the error is above
    ``err_tol`` [m], and it fell by less than ``progress`` (fraction) over ``window`` steps.

    Args:
        n_envs: Number of environments. window: Steps looked back.
    """

    def __init__(self, n_envs: int, window: int = 120, err_tol: float = 1e-3, progress: float = 0.05,
                 static_tol: float = 1e-4):
        self.window, self.err_tol, self.progress, self.static_tol = window, err_tol, progress, static_tol
        self._err = np.full((window, n_envs), np.nan)
        self._target = np.full((window, n_envs, 3), np.nan)
        self._k = 0

    def update(self, err: np.ndarray, target_pos: np.ndarray) -> np.ndarray:
        """Record one step: err (n_envs,) [m], target_pos (n_envs, 3). Returns stalled (n_envs,), a new array."""
        stalled = np.empty(self._err.shape[1], dtype=np.bool_)
        _stall_update(self._err, self._target, self._k, kernel_array(err), kernel_array(target_pos), self.err_tol,
                      self.progress, self.static_tol, stalled)
        self._k += 1
        return stalled


@dataclass
class TelemetryLog:
    """Everything recorded during a run; arrays grow one row per control tick.

    Attributes (per tick, per environment): t [s], pos_err [m], rot_err [rad] (the worst target's), solver_ok,
    scale (task speed scale s of the QP), n_active (constraints at their bound), min_distance [m] to obstacles
    (inf if none watched), stalled; pos_err_links [m]: each target link's position error (per tick (n_envs, k)).
    """

    t: list[float] = field(default_factory=list)
    pos_err: list[np.ndarray] = field(default_factory=list)
    rot_err: list[np.ndarray] = field(default_factory=list)
    solver_ok: list[np.ndarray] = field(default_factory=list)
    scale: list[np.ndarray] = field(default_factory=list)
    n_active: list[np.ndarray] = field(default_factory=list)
    min_distance: list[np.ndarray] = field(default_factory=list)
    stalled: list[np.ndarray] = field(default_factory=list)
    active_names: list[list[list[str]]] = field(default_factory=list)
    pos_err_links: list[np.ndarray] = field(default_factory=list)

    def record(self, t: float, pos_err, rot_err, solver_ok, scale, n_active, min_distance, stalled, active_names,
               pos_err_links=None, owned: bool = False) -> None:
        """One tick's row. The arrays are copied, unless ``owned``: the caller made them for this row and never
        writes them again (a controller's fresh results, or read-only constants), so the log keeps them as they
        are (a tick's eight copies cost ~4 us)."""
        self.t.append(t)
        if pos_err_links is not None:
            self.pos_err_links.append(pos_err_links if owned else np.array(pos_err_links, dtype=float))
        row = (pos_err, rot_err, solver_ok, scale, n_active, min_distance, stalled)
        if not owned:
            row = tuple(np.array(a) for a in row)  # np.array copies
        for column, value in zip((self.pos_err, self.rot_err, self.solver_ok, self.scale, self.n_active,
                                  self.min_distance, self.stalled), row):
            column.append(value)
        self.active_names.append(active_names)

    def clear(self) -> None:
        """Forget every row (an environment that runs without end keeps only what its caller read)."""
        for f in dataclasses.fields(self):
            getattr(self, f.name).clear()

    def arrays(self) -> dict[str, np.ndarray]:
        """Stacked arrays of shape (n_ticks, n_envs) (t: (n_ticks,); pos_err_links: (n_ticks, n_envs, k) where
        recorded)."""
        out = {"t": np.array(self.t)}
        if self.pos_err_links and len(self.pos_err_links) == len(self.t):
            out["pos_err_links"] = np.array(self.pos_err_links)
        for name in ("pos_err", "rot_err", "solver_ok", "scale", "n_active", "min_distance", "stalled"):
            out[name] = np.array(getattr(self, name))
        return out


class InvariantMonitor:
    """The worst values, per environment, of what the simulated arms promise: joints within their limits
    and velocities within their URDF bounds, updated from the measured state after every physics step.

    Args:
        q_lower, q_upper, v_max: The model's limits (n_dofs,).
    """

    def __init__(self, q_lower: np.ndarray, q_upper: np.ndarray, v_max: np.ndarray, n_envs: int):
        self.q_lower, self.q_upper = q_lower, q_upper
        self.v_max = np.where(np.isfinite(v_max) & (v_max > 0), v_max, np.inf)
        self.limit_excess = np.zeros(n_envs)  # [rad] or [m] beyond a limit, 0 if never
        self.velocity_ratio = np.zeros(n_envs)  # largest |v| / v_max seen

    def update(self, q: np.ndarray, v: np.ndarray) -> None:
        """One measured state: q, v (n_envs, n_dofs)."""
        excess = np.maximum(self.q_lower - q, q - self.q_upper).max(axis=1)
        self.limit_excess = np.maximum(self.limit_excess, excess)
        self.velocity_ratio = np.maximum(self.velocity_ratio, (np.abs(v) / self.v_max).max(axis=1))
