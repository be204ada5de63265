"""Value checks that several control configs share (each config's ``checks`` lists the rest beside its fields):
the control rate and stall judgement of every controller, and the place target, heights, speeds, tolerances and
times of the manipulation motions. Rows are ``(where, ok, message)`` (app.validation.Check)."""

from __future__ import annotations

from app.errors import AppError
from app.validation import Check, CheckContext, Where

MAX_STALL_WINDOW = 10 ** 6  # [ticks] of error history kept per environment for stall detection


def controller_checks(c, at: Where, ctx: CheckContext) -> list[Check]:
    """``control_hz`` (at most the physics rate), ``stall_window`` and ``stall_tol`` of a controller config."""
    hz = ctx.scene.physics_hz
    return [(at("control_hz"), c.control_hz is None or 0 < c.control_hz <= hz,
             f"must be in (0, physics_hz={hz}], got {c.control_hz}"),
            (at("stall_window"), 1 <= c.stall_window <= MAX_STALL_WINDOW,
             f"must be 1..{MAX_STALL_WINDOW} ticks (a window of error history per environment), got {c.stall_window}"),
            (at("stall_tol"), c.stall_tol > 0, f"must be > 0 m, got {c.stall_tol}")]


POSITIVE = ("approach_height", "lift_height", "speed", "accel", "angular_speed", "pos_tol", "rot_tol", "phase_timeout",
            "close_time", "slip_tol", "success_tol")  # what pick_place and handover time and judge by


def place_and_timing_checks(t, at: Where) -> list[Check]:
    """The place target's range and the heights, speeds, tolerances and times a pick_place or handover shares."""
    return [
        (at("place_range"), t.place_range is None or all(lo <= hi for lo, hi in zip(*t.place_range)),
         f"needs [[x_lo, y_lo], [x_hi, y_hi]] with lo <= hi, got {t.place_range}"),
        (at("min_separation"), t.min_separation >= 0, f"must be >= 0 m, got {t.min_separation}"),
    ] + [(at(name), getattr(t, name) > 0, f"must be > 0, got {getattr(t, name)}") for name in POSITIVE]


def link_checks(model, named: list[tuple[str, str]]) -> list[Check]:
    """Each (where, link) names a link of ``model`` (the message lists the valid ones)."""
    rows = []
    for where, link in named:
        try:
            model.link_index(link)
            rows.append((where, True, ""))
        except AppError as exc:
            rows.append((where, False, str(exc)))
    return rows
