"""The scripted expert as a policy: the run's own pick-and-place or hand-over motion (app.tasks.pick_place,
app.tasks.handover) for each environment's episode, observing the simulator as ``app.run`` does and acting
through the environments' ``ee_pose`` action mode like any other policy (end-effector poses and finger
positions), so its success rate measures the environment's interface as well as the motion."""

from __future__ import annotations

import numpy as np

from app.episode.motion_factory import object_motion
from app.errors import InputError
from app.tasks import object_task


class ExpertPolicy:
    """``select_action(observation) -> (num_envs, action_dim)`` for an app.envs vector environment in the
    ``ee_pose`` action mode whose run's task is a pick-and-place or hand-over. Each environment's motion is made
    when its episode starts (its scene: the object's start and the place target)."""

    name = "expert"

    def __init__(self, env):
        core = env.unwrapped.core if hasattr(env, "unwrapped") else env.core
        if core.options.action_mode != "ee_pose":
            raise InputError(f"the scripted expert acts in the ee_pose action mode; the environment's is "
                             f"{core.options.action_mode!r}")
        if object_task(core.run.motion) is None:
            raise InputError(f"the scripted expert acts in object tasks (app.eval --list-tasks); the run's task is "
                             f"{core.run.motion.type!r}")
        self.core = core
        self.motions: list = [None] * core.n
        self._scenes: list = [None] * core.n

    def reset(self) -> None:
        self.motions = [None] * self.core.n
        self._scenes = [None] * self.core.n

    def select_action(self, observation: dict) -> np.ndarray:
        del observation  # the expert reads the simulator, as app.run's motions do
        core, world = self.core, self.core.world
        obs = world.observations()
        out = []
        for e in range(core.n):
            if self.motions[e] is None or self._scenes[e] is not core.scenes[e] or core.steps[e] == 0:
                self._start(e)
            t = core.steps[e] * world.dt
            motion = self.motions[e]
            motion.observe(t, self._slice(obs, e))
            targets = motion(t + world.dt)  # where the arm should be when the coming step ends
            closing = np.atleast_2d(motion.closing).reshape(-1)  # (n_arms,) in the motion's arm order
            out.append(self._action(targets, closing))
        return np.array(out, dtype=np.float32)

    def _start(self, e: int) -> None:
        scene, run = self.core.scenes[e], self.core.run
        starts = {name: (np.asarray(pos)[None], np.asarray(quat)[None]) for name, (pos, quat) in scene.objects.items()}
        self.motions[e] = object_motion(run, self.core.world.robot, starts, np.asarray(scene.place)[None])
        self._scenes[e] = scene

    def _slice(self, obs: dict, e: int):
        one = {arm: type(o)(*[np.asarray(x)[e:e + 1] for x in o]) for arm, o in obs.items()}
        if self.core.run.motion.n_arms > 1:
            return one
        return next(iter(one.values()))

    def _action(self, targets, closing: np.ndarray) -> np.ndarray:
        """The ee_pose action (n_arms * 8,) in the layout's arm order from the motion's targets and closing
        fractions (its own target order)."""
        layout = self.core.world.layout
        order = list(layout.target_order)
        k = len(layout.arms)
        by_arm = np.array([[closing[order.index(a)] for a in range(k)]])
        fingers = layout.finger_of(by_arm)[0]
        return np.concatenate([np.concatenate([targets.pos[0, order.index(a)], targets.quat[0, order.index(a)],
                                               [fingers[a]]]) for a in range(k)])
