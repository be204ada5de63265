"""What the episode asks of every controller's config (app.episode.loop, the report, app.track), with the answers
of a controller that keeps no collision rows; a controller's config inherits it and overrides what differs."""

from __future__ import annotations

from typing import ClassVar

ACCEL_MAX = 40.0  # [rad/s^2]: the joint acceleration bound a controller keeps on what it commands, unless set
JERK_RISE_S = 0.02  # [s]: from rest to the acceleration bound at the jerk bound
JERK_MAX = ACCEL_MAX / JERK_RISE_S  # [rad/s^3]: the joint jerk bound a controller keeps on what it commands, unless set


class ControllerConfigBase:
    """The shared questions. ``d_safe``: the collision margin kept [m] (None: none); ``mode``: ``control`` drives
    the motors, ``kinematic`` sets the state; ``keeps_arms_apart``: a robot's several arms are kept d_safe apart;
    ``rows_from_spheres``: the collision rows come from the link spheres (app.collision), not PyBullet;
    ``velocity_scale``: the fraction of the URDF's velocity limits it commands; ``accel_max``: the joint
    acceleration bound it keeps [rad/s^2] (None: none)."""

    d_safe: ClassVar[float | None] = None
    mode: ClassVar[str] = "control"
    keeps_arms_apart: ClassVar[bool] = False
    rows_from_spheres: ClassVar[bool] = False
    velocity_scale: ClassVar[float] = 1.0
    accel_max: ClassVar[float | None] = None  # [rad/s^2] the bound it keeps on its commands; None: none (the motion
    # report then judges against ACCEL_MAX)

    def tolerances(self) -> dict[str, float]:
        """The tolerances the controller itself judges a target reached by (none: the run's are used)."""
        return {}
