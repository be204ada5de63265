"""``TrossenArmDriver``: the real driver's class, over a simulated WidowX AI (app.trossen_arm.world).

Its methods come from the mixins, one concept each: life and plumbing (driver_core), joint goals and modes
(joint_commands), Cartesian goals (cartesian_commands), measurements (outputs), configurations (settings).
"""

from __future__ import annotations

import contextlib

from app.errors import AppError
from app.trossen_arm.argument_types import pybind_checked
from app.trossen_arm.cartesian_commands import CartesianCommands
from app.trossen_arm.outputs import Outputs
from app.trossen_arm.settings import Settings


@pybind_checked
class TrossenArmDriver(CartesianCommands, Outputs, Settings):
    """Trossen Arm Driver (simulated): ``configure`` picks the simulated arm its IP names, opens no connection."""

    def __init__(self) -> None:
        super().__init__()

    def __del__(self) -> None:
        """A driver that goes away frees its arm (the real one disconnects and the arm goes idle)."""
        with contextlib.suppress(AppError, AttributeError):  # the world may be gone at interpreter exit
            self.cleanup()
