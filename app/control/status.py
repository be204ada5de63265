"""Each environment's state at a glance, from its latest telemetry: one code per environment, a name and a
colour per code (the GUI, the video overlay and the console use this one table)."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

REACHED_POS, REACHED_ROT = 1e-3, 1e-2  # [m], [rad]: "reached" in the report, the console and the pictures


class EnvStatus(IntEnum):
    """Worst first in :data:`SEVERITY` order: a failed solver outranks a stall, a stall a constraint."""

    REACHED = 0
    TRACKING = 1
    CONSTRAINED = 2
    STALLED = 3
    FAILED = 4


STATUS_STYLE = {  # code -> (label, RGB 0-255)
    EnvStatus.REACHED: ("reached", (40, 200, 70)),
    EnvStatus.TRACKING: ("tracking", (250, 200, 30)),
    EnvStatus.CONSTRAINED: ("constraint active", (40, 150, 255)),
    EnvStatus.STALLED: ("stalled", (240, 120, 20)),
    EnvStatus.FAILED: ("solver failed", (230, 30, 60)),
}


def reached(pos_err: np.ndarray, rot_err: np.ndarray) -> np.ndarray:
    """Within the report's tolerances: pos_err [m], rot_err [rad] (...) -> bool (...)."""
    return (np.asarray(pos_err) <= REACHED_POS) & (np.asarray(rot_err) <= REACHED_ROT)


def env_status(pos_err: np.ndarray, rot_err: np.ndarray, solver_ok: np.ndarray, stalled: np.ndarray,
               n_active: np.ndarray) -> np.ndarray:
    """Status code per environment (n_envs,) int8 from one telemetry row (each (n_envs,)): the solver failed,
    else stalled, else reached, else a constraint at its bound, else tracking."""
    code = np.full(len(pos_err), EnvStatus.TRACKING, dtype=np.int8)
    code[np.asarray(n_active) > 0] = EnvStatus.CONSTRAINED
    code[reached(pos_err, rot_err)] = EnvStatus.REACHED
    code[np.asarray(stalled, dtype=bool)] = EnvStatus.STALLED
    code[~np.asarray(solver_ok, dtype=bool)] = EnvStatus.FAILED
    return code


def latest_status(telemetry, n_envs: int) -> np.ndarray:
    """:func:`env_status` of a TelemetryLog's last row; every environment TRACKING before the first tick."""
    if not telemetry.t:
        return np.full(n_envs, EnvStatus.TRACKING, dtype=np.int8)
    return env_status(telemetry.pos_err[-1], telemetry.rot_err[-1], telemetry.solver_ok[-1], telemetry.stalled[-1],
                      telemetry.n_active[-1])
