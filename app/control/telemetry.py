"""Per-step, per-environment telemetry: tracking errors, QP status, active constraints, stalls."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
        """Record one step: err (n_envs,) [m], target_pos (n_envs, 3). Returns stalled (n_envs,)."""
        i = self._k % self.window
        oldest = (self._k + 1) % self.window
        self._err[i], self._target[i] = err, target_pos
        self._k += 1
        if self._k < self.window:
            return np.zeros(len(err), dtype=bool)
        moved = self._target[i] - self._target[oldest]
        static = np.sqrt((moved * moved).sum(axis=-1)) <= self.static_tol  # np.linalg.norm's sum, without its checks
        no_progress = err > (1.0 - self.progress) * self._err[oldest]
        return static & (err > self.err_tol) & no_progress


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
               pos_err_links=None) -> None:
        self.t.append(t)
        if pos_err_links is not None:
            self.pos_err_links.append(np.array(pos_err_links, dtype=float))  # np.array copies
        self.pos_err.append(np.array(pos_err))
        self.rot_err.append(np.array(rot_err))
        self.solver_ok.append(np.array(solver_ok))
        self.scale.append(np.array(scale))
        self.n_active.append(np.array(n_active))
        self.min_distance.append(np.array(min_distance))
        self.stalled.append(np.array(stalled))
        self.active_names.append(active_names)

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
