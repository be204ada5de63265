"""The motion-quality report of one rollout: per arm joint the peak velocity, acceleration and jerk of the commanded
and of the simulated motion against the joint's MotionLimits, the time spent at a limit, IK branch changes, and a
verdict: ``smooth``, or the first offending event (time, joint, source, quantity, value, limit). A commanded
velocity beyond the limit is a step in the command that one sample cannot follow; a position, velocity or effort
that is not finite (a simulation blown up) is an event of its own (``non_finite``).

Derivatives are backward differences of the samples (``dt`` apart): velocity from the positions (or the measured
velocities where given), acceleration from the velocity, jerk from the acceleration; the velocity at sample k is
the motion's over (t_{k-1}, t_k], the acceleration's spans two intervals and the jerk's three, so their events are
timed at the interval's end (up to 1.5 samples after its middle). Where no position is commanded (NaN: an effort
or velocity mode, before the first command) the joint counts as commanded to be where it is measured, so a command
that starts far from the arm is a step, as it is on the real controller.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.errors import InputError
from app.quality.limits import AT_LIMIT, TOLERANCE, MotionLimits

QUANTITIES = ("velocity", "acceleration", "jerk")


class MotionSamples(NamedTuple):
    """One rollout's arm joints sampled every ``dt`` [s] from ``t0`` [s]: ``q_sim`` (T, n) measured positions,
    ``q_cmd`` (T, n) commanded positions (NaN: none) or None, ``v_sim`` (T, n) measured velocities or None,
    ``effort`` (T, n) measured efforts or None, ``branch`` (T,) the IK branch of each sample's command (-1:
    unknown) or None."""

    dt: float
    q_sim: np.ndarray
    q_cmd: np.ndarray | None = None
    v_sim: np.ndarray | None = None
    effort: np.ndarray | None = None
    branch: np.ndarray | None = None
    t0: float = 0.0


class MotionEvent(NamedTuple):
    """A limit passed: at ``t`` [s] joint ``joint``'s ``source`` (commanded | simulated) ``quantity`` (velocity,
    acceleration, jerk, effort, non_finite) was ``value`` against ``limit``."""

    t: float
    joint: str
    source: str
    quantity: str
    value: float
    limit: float

    def short(self) -> str:
        """A few words for a video frame: the quantity, the joint and how many times its limit."""
        if self.quantity == "non_finite":
            return f"{self.joint} not finite"
        return f"{self.quantity} {self.joint} {abs(self.value) / self.limit:.1f}x"

    def describe(self) -> str:
        if self.quantity == "non_finite":
            return f"{self.source} state of {self.joint} not finite at t={self.t:.3f} s"
        step = " (a step one sample cannot follow)" if (self.source, self.quantity) == ("commanded", "velocity") else ""
        return (f"{self.source} {self.quantity} of {self.joint} {abs(self.value):.4g} beyond its limit "
                f"{self.limit:.4g} at t={self.t:.3f} s{step}")


def analyse(samples: MotionSamples, limits: MotionLimits) -> dict:
    """The report (JSON-ready dict): ``verdict`` ('smooth' | 'flagged'), ``first_event`` (None or the event's
    fields and ``text``), ``events`` (count per source and quantity), ``joints`` (per joint name the peaks of each
    source, ``time_at_velocity_limit_s``, ``time_at_effort_limit_s``), ``peak_ratios`` (per source and quantity
    the largest |value| / limit over the joints), ``branch_changes`` ([{t, from, to}]: told, not judged: a path
    through a singular place changes branch without a jump, and a jump is a commanded velocity event),
    ``duration_s``, ``limits`` (MotionLimits.to_dict)."""
    series = _series(samples, limits)
    found = all_events(samples, limits, series)
    counts = {f"{source}_{quantity}": 0 for source in series for quantity in QUANTITIES}
    counts |= {"simulated_effort": 0} if samples.effort is not None else {}
    for event in found:
        key = f"{event.source}_{event.quantity}"
        counts[key] = counts.get(key, 0) + 1
    first = found[0] if found else None
    return {"verdict": "smooth" if first is None else "flagged",
            "first_event": None if first is None else {**first._asdict(), "text": first.describe()},
            "events": counts, "branch_changes": _branch_changes(samples),
            "joints": _joint_figures(series, samples, limits), "peak_ratios": _peak_ratios(series, limits),
            "duration_s": float(samples.dt * (len(samples.q_sim) - 1)), "limits": limits.to_dict()}


def all_events(samples: MotionSamples, limits: MotionLimits, series: dict | None = None) -> list[MotionEvent]:
    """Every sample's passed limit of every kind (one event per sample and kind: its worst joint), in time order,
    at one time a commanded event before a simulated one (the cause before its effect); ``series``: _series' where
    the caller has it."""
    series, events = _series(samples, limits) if series is None else series, []
    for source, values in series.items():
        for quantity, x in zip(QUANTITIES, values):
            events += _over(x, getattr(limits, quantity), samples, source, quantity, limits.names)
    if samples.effort is not None:
        events += _over(np.asarray(samples.effort, float)[None], limits.effort, samples, "simulated", "effort",
                        limits.names)
    events += _non_finite(samples, limits.names)
    return sorted(events, key=lambda e: (e.t, e.source != "commanded"))


def _non_finite(samples: MotionSamples, names: tuple[str, ...]) -> list[MotionEvent]:
    """The first sample whose measured position, velocity or effort, or commanded position, is inf or NaN (a
    command may be NaN: none given), as one event per source."""
    out = []
    command = None if samples.q_cmd is None else np.where(np.isnan(samples.q_cmd), 0.0, samples.q_cmd)
    for source, arrays in (("simulated", (samples.q_sim, samples.v_sim, samples.effort)), ("commanded", (command,))):
        bad = np.zeros(np.shape(samples.q_sim), dtype=bool)
        for arr in arrays:
            if arr is not None:
                bad |= ~np.isfinite(np.asarray(arr, dtype=float))
        if bad.any():
            k, j = np.argwhere(bad)[0]
            out.append(MotionEvent(float(samples.t0 + k * samples.dt), names[j], source, "non_finite", float("nan"),
                                   float("nan")))
    return out


def _series(samples: MotionSamples, limits: MotionLimits) -> dict:
    """source -> (velocity, acceleration, jerk) of the checked samples (commanded only where given)."""
    q_sim = _checked(samples, limits)
    out = {"simulated": derivatives(q_sim, samples.dt, samples.v_sim)}
    if samples.q_cmd is not None:
        out["commanded"] = derivatives(np.where(np.isnan(samples.q_cmd), q_sim, samples.q_cmd), samples.dt, None)
    return out


def _checked(samples: MotionSamples, limits: MotionLimits) -> np.ndarray:
    q = np.asarray(samples.q_sim, dtype=float)
    n = len(limits.names)
    if q.ndim != 2 or q.shape[1] != n:
        raise InputError(f"motion samples: q_sim must have shape (T, {n}) for the joints {list(limits.names)}, "
                         f"got {q.shape}")
    if not (samples.dt > 0 and np.isfinite(samples.dt)):
        raise InputError(f"motion samples: dt must be a finite number > 0 s, got {samples.dt}")
    for name in ("q_cmd", "v_sim", "effort"):
        arr = getattr(samples, name)
        if arr is not None and np.shape(arr) != q.shape:
            raise InputError(f"motion samples: {name} must have q_sim's shape {q.shape}, got {np.shape(arr)}")
    return q


def derivatives(q: np.ndarray, dt: float, v: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """(velocity, acceleration, jerk) of samples q (T, n) ``dt`` apart (velocity: v (T, n) where given), each
    (1, T, n) with NaN where a sample has too few before it."""
    nan = np.full((1, q.shape[1]), np.nan)
    vel = np.vstack([nan, np.diff(q, axis=0) / dt]) if v is None else np.asarray(v, dtype=float)
    acc = np.vstack([nan, np.diff(vel, axis=0) / dt])
    jerk = np.vstack([nan, np.diff(acc, axis=0) / dt])
    return vel[None], acc[None], jerk[None]


def limit_ratios(x: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """|x| / limit (any shape ending in the joints), 0 where x is NaN (too few samples before it: a non-finite state
    is its own event) and where a limit is missing (0 or inf: not judged)."""
    safe = np.where(np.asarray(limit) > 0, limit, np.inf)
    return np.nan_to_num(np.abs(x), nan=0.0, posinf=0.0) / safe


def _over(x: np.ndarray, limit: np.ndarray, samples: MotionSamples, source: str, quantity: str,
          names: tuple[str, ...]) -> list[MotionEvent]:
    """Each sample (in time order) where some joint's |x| passes its limit by more than TOLERANCE: its worst
    joint's event. ``x`` is (1, T, n)."""
    ratio = limit_ratios(x[0], limit)
    rows = np.flatnonzero((ratio > 1.0 + TOLERANCE).any(axis=1))
    out = []
    for k in rows:
        j = int(np.argmax(ratio[k]))
        out.append(MotionEvent(float(samples.t0 + k * samples.dt), names[j], source, quantity,
                               float(x[0, k, j]), float(limit[j])))
    return out


def _peak_ratios(series: dict, limits: MotionLimits) -> dict:
    """``<source>_<quantity>`` -> the largest |value| / limit over the samples and joints (0.0 without samples)."""
    return {f"{source}_{quantity}": float(limit_ratios(x[0], getattr(limits, quantity)).max(initial=0.0))
            for source, values in series.items() for quantity, x in zip(QUANTITIES, values)}


def _branch_changes(samples: MotionSamples) -> list[dict]:
    """Each change of the commanded IK branch: {t, from, to, through}, comparing a labelled sample (>= 0) with the
    labelled one before it; ``through``: ``singular place`` where a sample between them belongs to two branches (-1:
    the path crossed where they meet, without a jump), else ``jump`` (the command left its branch between two
    samples)."""
    if samples.branch is None:
        return []
    out, last, crossed = [], -1, False
    for k, b in enumerate(np.asarray(samples.branch, dtype=int)):
        if b < 0:
            crossed = last >= 0
            continue
        if last >= 0 and b != last:
            out.append({"t": float(samples.t0 + k * samples.dt), "from": int(last), "to": int(b),
                        "through": "singular place" if crossed else "jump"})
        last, crossed = b, False
    return out


def _joint_figures(series: dict, samples: MotionSamples, limits: MotionLimits) -> dict:
    out = {}
    for j, name in enumerate(limits.names):
        row = {source: {f"{q}_peak": _peak(x[0, :, j]) for q, x in zip(QUANTITIES, values)}
               for source, values in series.items()}
        v = np.abs(np.nan_to_num(series["simulated"][0][0, :, j]))
        row["time_at_velocity_limit_s"] = float(samples.dt * np.count_nonzero(v >= AT_LIMIT * limits.velocity[j]))
        if samples.effort is not None:
            e = np.abs(np.asarray(samples.effort)[:, j])
            row["simulated"]["effort_peak"] = _peak(e)
            row["time_at_effort_limit_s"] = float(samples.dt * np.count_nonzero(e >= AT_LIMIT * limits.effort[j]))
        out[name] = row
    return out


def _peak(x: np.ndarray) -> float | None:
    x = np.abs(x[np.isfinite(x)])
    return float(x.max()) if x.size else None


def summary_line(reports: list[dict]) -> str:
    """One line over several rollouts' reports: how many were smooth, and what flagged the others (the first
    event's source and quantity, counted)."""
    flagged: dict[str, int] = {}
    for r in reports:
        if r["first_event"] is not None:
            key = f"{r['first_event']['source']} {r['first_event']['quantity']}"
            flagged[key] = flagged.get(key, 0) + 1
    smooth = sum(r["verdict"] == "smooth" for r in reports)
    text = f"motion: {smooth}/{len(reports)} smooth"
    if flagged:
        text += "; flagged first by " + ", ".join(f"{k} {n}" for k, n in sorted(flagged.items()))
    return text
