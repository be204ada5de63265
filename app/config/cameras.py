"""The scene's video camera (``camera:``), a frozen dataclass with its value checks beside its fields (see
app.validation). The named cameras recorded as observations (``cameras:``) are app.specs.CameraStream."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.validation import Check, CheckContext, Where, fov_check


@dataclass(frozen=True)
class CameraConfig:
    eye: tuple[float, float, float] = (1.2, -1.2, 0.9)
    target: tuple[float, float, float] = (0.3, 0.0, 0.15)
    fov: float = 50.0
    width: int = 480
    height: int = 360

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """The field of view and the line of sight (its size is checked as the video's, which may replace it)."""
        return [fov_check(at("fov"), self.fov),
                (at("eye"), math.dist(self.eye, self.target) > 1e-6,
                 f"must differ from camera.target, got eye {self.eye} and target {self.target}")]
