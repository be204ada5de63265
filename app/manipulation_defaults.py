"""Default values of a scene's objects and of a gripper, in one place for the two layers that need them: the run
config's sections (app.config.scene_sections, what a YAML file may leave out) and the simulator's specs
(app.sim.objects.ObjectSpec, app.sim.gripper.GripperSpec, what a script may leave out). Defaults: a 5 cm,
50 g cube on the table in front of the WidowX AI, whose two carriages close along the end effector's y axis."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ObjectDefaults:
    """A dynamic body's defaults. Sizes [m] (size: full extents), mass [kg], contact coefficients, rgba in
    [0, 1], pos (3,) [m] in the environment's frame."""

    shape: str = "box"
    size: tuple[float, float, float] = (0.05, 0.05, 0.05)
    radius: float = 0.025
    height: float = 0.05
    scale: float = 1.0
    mass: float = 0.05
    friction: float = 1.0
    spinning_friction: float = 0.002
    rolling_friction: float = 0.0
    rgba: tuple[float, float, float, float] = (0.85, 0.2, 0.15, 1.0)
    pos: tuple[float, float, float] = (0.35, 0.0, 0.025)


@dataclass(frozen=True)
class GripperDefaults:
    """A gripper's defaults: motor force cap [N] (or [N m]), finger friction, the end-effector axes that approach
    the object and along which the fingers close, and whether two fingers are tied by a gear constraint."""

    force: float = 5.0
    friction: float = 1.0
    approach_axis: str = "x"
    closing_axis: str = "y"
    mimic: bool = True


OBJECT = ObjectDefaults()
GRIPPER = GripperDefaults()
