"""What the episode loop, the GUI, the report, the video and the recorder call on a run's motion, written down.

A motion gives targets over time (``__call__``); :class:`MotionBase` holds every answer a motion that does not
care gives (no gripper command, no phases, nothing to mark), so the callers ask each motion the same questions and
never probe for attributes. A feedback motion (pick-and-place, hand-over) also observes its environments every
control tick and decides the grippers' commands and the contacts they are meant to make (:class:`FeedbackMotion`);
what it decides goes to the collision rows as data (app.ik.limits.distance.GraspState), never into the
simulator's objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from app.errors import NotApplicableError


@dataclass(frozen=True)
class Targets:
    """Targets at one instant. pos (n_envs, k, 3) [m], quat (n_envs, k, 4), vel (n_envs, k, 3) [m/s]."""

    pos: np.ndarray
    quat: np.ndarray
    vel: np.ndarray


class Motion(Protocol):
    """A run's motion for ``n_envs`` environments: ``n_targets`` targets per environment at each time t [s]."""

    n_targets: int
    feedback: bool  # True: a FeedbackMotion (it observes every control tick); False: driven by time alone
    arms: tuple[str, ...]  # the arms whose grippers it works (a hand-over's giver and taker); () for one or none
    object_name: str | None  # the scene object it handles (None: none)

    def __call__(self, t: float) -> Targets:
        """The targets at t [s], in every environment's frame."""

    def closing_at(self, t: float) -> np.ndarray | None:
        """A time-driven motion's gripper command at t [s]: closing fraction (n_envs,), 0 open .. 1 closed; None:
        it commands no gripper (the fingers stay open)."""

    def codes(self) -> np.ndarray | None:
        """Each environment's phase-or-failure code now (app.control.phases words; the video's and GUI's
        captions), int (n_envs,); None: a motion without phases."""

    @property
    def marks(self) -> np.ndarray | None:
        """Points a picture marks (n_envs, k, 3) [m] (a place target); None: none."""

    @property
    def paths(self) -> np.ndarray | None:
        """Planned end-effector paths a picture draws (n_envs, P, 3) [m], NaN rows where an environment follows
        none (app.control.tracks.polylines); None: a motion that plans nothing."""


class FeedbackMotion(Motion, Protocol):
    """A motion that observes (app.control.observation.Observation; one per arm, by name, for ``arms``) before
    each control tick and commands the grippers."""

    closing: np.ndarray  # the grippers' commands: (n_envs,) for one gripper, (len(arms), n_envs) for several
    place: np.ndarray  # (n_envs, 3) [m]: where each environment puts the object down (the GUI moves it)

    def observe(self, t: float, obs) -> None:
        """Advance every environment at t [s] from what it sees now."""

    @property
    def released(self) -> np.ndarray:
        """(n_envs,) bool: the fingers may touch the object now."""

    @property
    def holder(self) -> np.ndarray:
        """(n_envs,) int: the index (into ``arms``, 0 for a one-gripper motion) of the arm carrying the object clear
        of everything else, -1 where none does."""

    def finish(self, obs) -> list[dict]:
        """Each environment's result at the end (placed, failure reason, slip, ...), from what it sees then."""


class ArmsFeedbackMotion(FeedbackMotion, Protocol):
    """A feedback motion of several arms (``arms``: one Observation each, by name; ``closing`` per arm)."""

    @property
    def exchanging(self) -> np.ndarray:
        """(n_envs,) bool: the grippers work side by side on the object (their fingers' pairs unwatched)."""


class MotionBase:
    """What a motion answers where it has nothing to say (see :class:`Motion`); concrete motions inherit it."""

    feedback: ClassVar[bool] = False
    can_restart: ClassVar[bool] = False  # whether restart() may start environments' episodes again
    arms: tuple[str, ...] = ()
    object_name: str | None = None
    arm_objects: dict[str, str] | None = None  # arm name -> the object it handles and observes (None: object_name)
    marks: np.ndarray | None = None
    paths: np.ndarray | None = None

    def closing_at(self, t: float) -> np.ndarray | None:
        return None

    def codes(self) -> np.ndarray | None:
        return None

    def outcomes(self) -> list[dict] | None:
        """A time-driven motion's per-environment results for the report (a plan task's); None: none."""
        return None

    def restart(self, envs) -> None:
        """Start the episodes of the environments ``envs`` again from where they stand (``can_restart``)."""
        raise NotApplicableError(f"{type(self).__name__} cannot start an episode again (can_restart is False)")
