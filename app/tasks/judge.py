"""Whether each environment's episode succeeded, judged from the simulator's state alone (whatever acts: a
scripted expert, a replayed dataset, a trained policy, random actions) by the task's own ``evaluate``
(app.tasks.object_task): the judge keeps what an episode's history adds (the best stage reached, a collision at
any step) and turns each step's observations into the task's TaskState. app.run, app.record and app.envs all
judge through it."""

from __future__ import annotations

import numpy as np

from app.tasks.object_task import ObjectTask
from app.tasks.outcome import LIFT, Evaluation, TaskState

NO_CRITERION = "no_success_criterion"  # the reason of a task without an object: it never succeeds


class TaskJudge:
    """Judges the episodes of ``n_envs`` environments of an object task ``task`` (None: a task without an object,
    never a success: its reason says so)."""

    def __init__(self, task: ObjectTask | None, n_envs: int):
        self.task, self.n = task, n_envs
        self.start = np.zeros((n_envs, 3))
        self.place = np.full((n_envs, 2), np.nan)
        self.best = np.zeros(n_envs, int)
        self.collided = np.zeros(n_envs, bool)
        self.lifted = np.zeros(n_envs, bool)
        self.last: Evaluation | None = None
        self.watched = () if task is None else task.watched()  # the objects whose poses update() needs

    def reset(self, envs: np.ndarray, start: np.ndarray, place: np.ndarray) -> None:
        """Environments ``envs`` (k,) start their episodes: the object at start (k, 3) [m], its place target
        place (k, 2) [m]."""
        envs = np.asarray(envs, dtype=int)
        self.start[envs], self.place[envs] = start, np.asarray(place, dtype=float)[:, :2]
        self.best[envs], self.collided[envs], self.lifted[envs] = 0, False, False

    def update(self, observations: dict, objects: dict | None = None, place: np.ndarray | None = None) -> Evaluation:
        """This step's evaluation from each arm's Observation (arm -> app.control.observation.Observation); for a
        task that watches other objects, ``objects``: the scene's bodies by name (``poses()`` -> (pos (n_envs, 3)
        [m], quat (n_envs, 4) wxyz)); ``place`` (n_envs, >= 2) [m]: the place targets now, where they may have
        moved since the reset (the GUI's sliders)."""
        if place is not None:
            self.place[:] = np.asarray(place)[:, :2]
        n = self.n
        if self.task is None or not observations:
            self.last = Evaluation(np.zeros(n, bool), np.zeros(n, int), np.full(n, np.nan), np.zeros(n, bool),
                                   [NO_CRITERION] * n)
            return self.last
        obs = list(observations.values())
        touched = np.any([o.contact.any(axis=1) for o in obs], axis=0)
        holds = [o.contact.all(axis=1) for o in obs]
        state = TaskState(obs[0].obj_pos, obs[0].obj_speed, touched=touched, held=np.any(holds, axis=0),
                          held_all=np.all(holds, axis=0), obj_quat=obs[0].obj_quat,
                          released=~touched,
                          collided=np.any([o.collided for o in obs], axis=0),
                          start_z=self.start[:, 2], place=self.place, best=self.best.copy(),
                          ever_collided=self.collided.copy(),
                          moved=np.linalg.norm(obs[0].obj_pos[:, :2] - self.start[:, :2], axis=1),
                          ever_lifted=self.lifted.copy(),
                          others=None if objects is None else
                          {name: np.concatenate(objects[name].poses(), axis=1) for name in self.watched})
        self.last = self.task.evaluate(state)
        self.best = np.maximum(self.best, self.last.stage)
        self.collided |= self.last.collided
        self.lifted |= state.held & (state.obj_pos[:, 2] > state.start_z + LIFT)
        return self.last

    def reason(self, e: int) -> str:
        """Why environment ``e``'s episode has not succeeded, as of the last update ('' after a success)."""
        if self.task is None:
            return NO_CRITERION
        return "" if self.last is None else self.last.reason[e]


def judged(episodes: list[dict], evaluation: Evaluation) -> None:
    """An expert's per-environment results (its ``finish``) judged by the task at the end: ``success`` and
    ``reason`` are the task's evaluation (the words app.eval gives the same state); ``expert_reason`` keeps what
    the expert said of itself, the cause where it failed (``unreachable``, ``slipped``, ...; '' where it
    finished)."""
    for e, episode in enumerate(episodes):
        episode.update(success=bool(evaluation.success[e]), reason=evaluation.reason[e],
                       expert_reason=episode.get("reason", ""))
