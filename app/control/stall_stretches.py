"""Stretches of ticks where an arm was behind its target, each with its cause (app.control.stall_causes): the
highest-priority cause seen in the stretch (CAUSES order, ``unexplained`` last), every cause's tick count, and
the worst detail of each (largest jump factor, smallest singular value, joints, collision rows, IK residual)."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.control.stall_causes import CAUSES, UNEXPLAINED


@dataclass
class Stretch:
    """Ticks [first, last] of one arm behind its target. Times [s]; errors the largest seen."""

    arm: str
    first: int
    last: int
    t_start: float
    t_end: float
    max_pos_err: float = 0.0
    max_rot_err: float = 0.0
    counts: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)

    @property
    def cause(self) -> str:
        return next((c for c in CAUSES if c in self.counts), UNEXPLAINED)

    def add(self, tick: int, t: float, pos_err: float, rot_err: float, causes: dict) -> None:
        self.last, self.t_end = tick, t
        self.max_pos_err, self.max_rot_err = max(self.max_pos_err, pos_err), max(self.max_rot_err, rot_err)
        for name, detail in (causes or {UNEXPLAINED: {}}).items():
            self.counts[name] = self.counts.get(name, 0) + 1
            self.details[name] = _worse(self.details.get(name), detail)

    def as_dict(self) -> dict:
        return {"arm": self.arm, "cause": self.cause, "t_start_s": self.t_start, "t_end_s": self.t_end,
                "ticks": self.last - self.first + 1, "max_pos_err_m": self.max_pos_err,
                "max_rot_err_rad": self.max_rot_err,
                "causes": {c: {"ticks": self.counts[c], **self.details[c]} for c in (*CAUSES, UNEXPLAINED)
                           if c in self.counts}}

    def line(self) -> str:
        """One line for the console."""
        detail = self.details[self.cause]
        extra = ", ".join(f"{k} {_short(v)}" for k, v in detail.items())
        return (f"{self.arm}: behind from t={self.t_start:.3f} s to {self.t_end:.3f} s ({self.last - self.first + 1} "
                f"ticks, max {self.max_pos_err * 1000:.1f} mm / {self.max_rot_err:.3f} rad): {self.cause}"
                + (f" ({extra})" if extra else ""))


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _worse(old: dict | None, new: dict) -> dict:
    """The worse of two details of one cause: larger factors and residuals, smaller singular values, every name."""
    if old is None:
        return dict(new)
    out = dict(old)
    for key, value in new.items():
        if key in ("factor", "ik_pos_err_m", "ik_rot_err_rad"):
            out[key] = max(out.get(key, value), value)
        elif key == "sigma_min":
            out[key] = min(out.get(key, value), value)
        elif isinstance(value, list):
            out[key] = sorted(set(out.get(key, [])) | set(value))
        else:
            out[key] = value
    return out


class StretchLog:
    """Collects stretches per arm as ticks come in (behind or not)."""

    def __init__(self, arms: list[str]):
        self.arms = list(arms)
        self.open: dict[str, Stretch | None] = {a: None for a in self.arms}
        self.closed: list[Stretch] = []

    def on_track(self, arm: str) -> None:
        """The arm is within tolerance this tick: its stretch, if any, ends."""
        if self.open[arm] is not None:
            self.closed.append(self.open[arm])
            self.open[arm] = None

    def behind(self, arm: str, tick: int, t: float, pos_err: float, rot_err: float, causes: dict) -> None:
        """The arm is behind this tick, for ``causes`` ({cause: detail}; empty: unexplained)."""
        if self.open[arm] is None:
            self.open[arm] = Stretch(arm, tick, tick, t, t)
        self.open[arm].add(tick, t, pos_err, rot_err, causes)

    def stretches(self) -> list[Stretch]:
        """Every stretch, the open ones closed, in order of their start."""
        for arm in self.arms:
            self.on_track(arm)
        return sorted(self.closed, key=lambda s: (s.first, self.arms.index(s.arm)))
