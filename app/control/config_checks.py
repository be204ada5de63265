"""Value checks that several control configs share (each config's ``checks`` lists the rest beside its fields):
the control rate and stall judgement of every controller, and links named by a config. Rows are
``(where, ok, message)`` (app.validation.Check); the manipulation motions' shared checks are
app.tasks.object_task's."""

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
