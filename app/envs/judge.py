"""Whether each environment's episode succeeded, judged from the simulator's state alone (whatever acts: a
scripted expert, a replayed dataset, a trained policy, random actions), in the words the pick-and-place report
uses where they mean the same.

Stages (the step's reward): 0 nothing, 1 a finger touched the object, 2 every finger of a gripper holds it,
3 held and lifted ``LIFT`` above its start, 4 placed: within the task's ``success_tol`` of the place target in x
and y, resting and released by every gripper (app.control.object_motion.ObjectMotion.placement), after having
been lifted. Success ends the episode (terminated). A failure's reason, at truncation: ``collision`` (an arm link
touched the table, an obstacle or another object, or a link other than the fingers touched the object, at any
step), else by the stage reached: ``not_touched``, ``grasp_missed`` (touched, never held), ``not_lifted``,
``fell`` (the object ended below where it started), ``not_released`` (at the place, still touched),
``misplaced`` (released off target), ``timeout`` (still carrying).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.control.object_motion import ObjectMotion
from app.episode.episode_scene import EpisodeScene

LIFT = 0.01  # [m] above the start: lifted
FALL = 0.02  # [m] below the start: fell off the table
OPEN = 0.1  # closing fraction under which a gripper counts as open


class Verdict(NamedTuple):
    """One step's judgement (n_envs,) each: success (bool), stage (int 0..4), place_error_m (xy [m], nan: no
    place), collided (this step)."""

    success: np.ndarray
    stage: np.ndarray
    place_error_m: np.ndarray
    collided: np.ndarray


class EpisodeJudge:
    """Judges the episodes of ``n_envs`` environments of an object task ``task`` (None: a task without an object,
    never a success: its reason says so)."""

    def __init__(self, task: ObjectMotion | None, n_envs: int):
        self.task, self.n = task, n_envs
        self.start_z = np.zeros(n_envs)
        self.place = np.full((n_envs, 2), np.nan)
        self.best = np.zeros(n_envs, int)
        self.collided = np.zeros(n_envs, bool)
        self.last: Verdict | None = None

    def reset(self, envs: np.ndarray, scenes: list[EpisodeScene]) -> None:
        """Environments ``envs`` start their episodes from ``scenes``."""
        for e, s in zip(np.asarray(envs, dtype=int), scenes):
            if self.task is not None:
                self.start_z[e] = s.objects[self.task.object][0][2]
                self.place[e] = s.place
            self.best[e], self.collided[e] = 0, False

    def update(self, observations: dict) -> Verdict:
        """This step's verdict from each arm's Observation (arm -> Observation, app.envs.world.EnvWorld)."""
        n = self.n
        if self.task is None or not observations:
            self.last = Verdict(np.zeros(n, bool), np.zeros(n, int), np.full(n, np.nan), np.zeros(n, bool))
            return self.last
        obs = list(observations.values())
        touched = np.any([o.contact.any(axis=1) for o in obs], axis=0)
        held = np.any([o.contact.all(axis=1) for o in obs], axis=0)
        released = np.all([(o.closing < OPEN) & ~o.contact.any(axis=1) for o in obs], axis=0)
        collided = np.any([o.collided for o in obs], axis=0)
        lifted = held & (obs[0].obj_pos[:, 2] > self.start_z + LIFT)
        placed, error = self.task.placement(obs[0].obj_pos, obs[0].obj_speed, self.place, released)
        success = placed & (self.best >= 3)
        stage = np.select([success, lifted, held, touched], [4, 3, 2, 1], 0)
        self.best = np.maximum(self.best, stage)
        self.collided |= collided
        self.obj_z, self.released = obs[0].obj_pos[:, 2], released
        self.last = Verdict(success, stage, error, collided)
        return self.last

    def reason(self, e: int) -> str:
        """Why environment ``e``'s episode has not succeeded (see the module docstring); '' after a success."""
        if self.task is None:
            return "no_success_criterion"
        if self.last is not None and self.last.success[e]:
            return ""
        if self.collided[e]:
            return "collision"
        best = self.best[e]
        if best < 3:
            return ("not_touched", "grasp_missed", "not_lifted")[best]
        if self.obj_z[e] < self.start_z[e] - FALL:
            return "fell"
        if self.last.place_error_m[e] <= self.task.success_tol and not self.released[e]:
            return "not_released"
        return "misplaced" if self.released[e] else "timeout"
