"""A static box (table, floor, obstacle)."""

from __future__ import annotations

from dataclasses import dataclass

from app.validation import Check, Where, nonzero


@dataclass(frozen=True)
class BoxSpec:
    """A static box: ``size`` (3,) full extents [m], centre ``pos`` (3,) [m] and ``quat`` (w, x, y, z) in each
    environment's frame, colour ``rgba`` in [0, 1]; ``collision`` False: seen, never touched."""

    name: str = "box"
    size: tuple[float, float, float] = (0.1, 0.1, 0.1)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0)
    collision: bool = True

    def checks(self, at: Where, model=None) -> list[Check]:
        """Sizes, orientation and colour (``model`` unused: a box needs no robot)."""
        return [(at("size"), all(x > 0 for x in self.size), f"every side must be > 0 m, got {self.size}"),
                (at("quat"), nonzero(self.quat), f"must be a nonzero (w, x, y, z) quaternion, got {self.quat}"),
                (at("rgba"), all(0 <= x <= 1 for x in self.rgba), f"values must be in [0, 1], got {self.rgba}")]

    def top(self) -> float:
        """The height of the box's top face [m] (an upright box)."""
        return self.pos[2] + self.size[2] / 2
