"""The driver's interpolation rules for one command, as numbers over time (numpy, no simulator).

A command moves a value vector (positions, velocities or efforts) from its start state at ``t0`` to a goal
in ``goal_time`` [s] (the real driver's rules, trossen_arm.pyi):

- goal_time > 0.2 s: positions quintic (position, velocity, acceleration matched at both ends), velocities
  cubic (velocity, acceleration matched), efforts linear; goal derivatives not given are zero;
- 0.001 s < goal_time <= 0.2 s: every kind linear from the start values to the goal values (position,
  feed-forward velocity and acceleration each);
- goal_time <= 0.001 s: the goal is applied at once.

After the goal time the goal state is held.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

QUINTIC_ABOVE = 0.2  # [s]
STEP_AT_OR_BELOW = 0.001  # [s]


@dataclass(frozen=True)
class Ramp:
    """One command's trajectory of ``order`` (0: efforts, 1: velocities, 2: positions) for n values.

    Attributes:
        t0: Start time [s] (simulated). duration: goal_time [s].
        start, goal: State rows (value, first derivative, second derivative), each shape (3, n); rows beyond
            the order's are carried (a velocity ramp's row 1 is the acceleration).
        order: 0, 1 or 2 (see above).
    """

    t0: float
    duration: float
    start: np.ndarray
    goal: np.ndarray
    order: int

    @property
    def t_end(self) -> float:
        return self.t0 + self.duration

    def kind(self) -> str:
        """'step', 'linear', 'cubic' or 'quintic': which rule this command's goal_time selects."""
        if self.duration <= STEP_AT_OR_BELOW:
            return "step"
        if self.duration <= QUINTIC_ABOVE or self.order == 0:
            return "linear"
        return "cubic" if self.order == 1 else "quintic"

    def sample(self, t: float, q_dofs: np.ndarray | None = None) -> np.ndarray:
        """State at time t [s]: shape (3, n): value, derivative, second derivative (zeros where the kind has
        none). ``q_dofs`` (the measured joints) is not used: a ramp is open loop."""
        kind = self.kind()
        s = (t - self.t0) / self.duration if self.duration > 0 else 1.0
        if kind == "step" or s >= 1.0:
            return self.goal.copy()
        s = max(s, 0.0)
        if kind == "linear":
            return self.start + s * (self.goal - self.start)
        if kind == "cubic":
            return _cubic(self.start, self.goal, self.duration, t - self.t0)
        return _quintic(self.start, self.goal, self.duration, t - self.t0)


def _cubic(start: np.ndarray, goal: np.ndarray, T: float, t: float) -> np.ndarray:
    """Hermite cubic of the value row (rows 0-1: value, derivative matched at 0 and T)."""
    x0, v0, x1, v1 = start[0], start[1], goal[0], goal[1]
    a2 = (3 * (x1 - x0) - (2 * v0 + v1) * T) / T**2
    a3 = (2 * (x0 - x1) + (v0 + v1) * T) / T**3
    out = np.zeros_like(start)
    out[0] = x0 + v0 * t + a2 * t**2 + a3 * t**3
    out[1] = v0 + 2 * a2 * t + 3 * a3 * t**2
    out[2] = 2 * a2 + 6 * a3 * t
    return out


def _quintic(start: np.ndarray, goal: np.ndarray, T: float, t: float) -> np.ndarray:
    """Quintic of the value row with value, derivative and second derivative matched at 0 and T."""
    x0, v0, a0 = start
    x1, v1, a1 = goal
    h = x1 - x0
    c3 = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c4 = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c5 = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T**2) / (2 * T**5)
    out = np.empty_like(start)
    out[0] = x0 + v0 * t + a0 / 2 * t**2 + c3 * t**3 + c4 * t**4 + c5 * t**5
    out[1] = v0 + a0 * t + 3 * c3 * t**2 + 4 * c4 * t**3 + 5 * c5 * t**4
    out[2] = a0 + 6 * c3 * t + 12 * c4 * t**2 + 20 * c5 * t**3
    return out


def state_rows(value: np.ndarray, d1: np.ndarray | None = None, d2: np.ndarray | None = None) -> np.ndarray:
    """A (3, n) state from a value vector and optional derivatives (None: zeros)."""
    value = np.asarray(value, dtype=float)
    zeros = np.zeros_like(value)
    return np.stack([value, zeros if d1 is None else np.asarray(d1, float), zeros if d2 is None else
                     np.asarray(d2, float)])
