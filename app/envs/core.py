"""The batched heart of app.envs' environments: ``num_envs`` episodes in one world, each reset on its own (seed or
given scene) and stepped together. Per step and environment: the observation, the reward (the judge's stage,
app.tasks.judge), terminated (success), truncated (the time limit) and an info dict: ``is_success``, ``stage``,
``place_error_m``, ``limit_excess`` (the largest joint-limit excess this step [rad or m], 0 within), ``stop_hits``
(how many joints a contact pushed onto a hard stop in this step's physics steps, app.sim.hard_stops), and in the
end-effector modes ``stalled`` / ``stall_cause`` / ``stall`` (app.envs.stalls); at an episode's end its
``reason`` (app.tasks.judge), ``episode_steps``, ``stall_steps`` and the episode's motion quality
(``motion_verdict``, ``motion_first``, ``motion_event``, ``motion_branch_changes``,
``motion_<source>_<quantity>_ratio``: app.envs.motion_watch)."""

from __future__ import annotations

import math

import numpy as np

from app.config.schema import RunConfig
from app.envs.actions import checked, command
from app.envs.motion_watch import commanded, episode_info
from app.envs.options import EnvOptions
from app.envs.pixels import Pixels, observed_cameras
from app.envs.spaces import action_space, observation_space
from app.envs.stalls import StepStalls
from app.envs.world import EnvWorld
from app.episode.episode_scene import EpisodeScene, draw_scene
from app.episode.loop import command_branches
from app.episode.object_state import observed_poses
from app.errors import InputError
from app.quality.trace import MotionTrace, TraceOptions
from app.tasks import TaskJudge, object_task


class EnvCore:
    """``num_envs`` environments of ``run`` with ``options`` (checked)."""

    def __init__(self, run: RunConfig, num_envs: int, options: EnvOptions):
        self.options = options.check()
        self.run, self.n = run, int(num_envs)
        fps = options.fps or run.video.fps
        self.world = EnvWorld(run, self.n, fps)
        self.fps = fps
        self.max_steps = options.max_episode_steps or max(1, math.ceil(run.duration * fps))
        self.cameras = observed_cameras(run, options) if options.pixels else []
        self.pixels = Pixels(self.world, self.cameras) if self.cameras else None
        self.action_space = action_space(self.world, options.action_mode)
        self.observation_space = observation_space(self.world, options, self.cameras)
        self.task = object_task(run.motion)
        self.judge = TaskJudge(self.task, self.n)
        self.stalls = StepStalls(self.world) if options.action_mode != "joint" else None
        self.motion = MotionTrace.of_robot(self.world.robot, 1.0 / fps, run.controller.accel_max,
                                           TraceOptions(command_branches(run, self.world.robot)))
        self.steps = np.zeros(self.n, int)
        self.stall_steps = np.zeros(self.n, int)
        self.scenes: list[EpisodeScene | None] = [None] * self.n
        self._goal = None

    def draw(self, seed: int) -> EpisodeScene:
        """The scene of an episode seeded ``seed`` (app.episode.episode_scene)."""
        return draw_scene(self.run, seed)

    def reset(self, envs: np.ndarray, scenes: list[EpisodeScene]) -> None:
        """Environments ``envs`` start new episodes in ``scenes`` (one each)."""
        envs = np.asarray(envs, dtype=int)
        self.world.reset_envs(envs, scenes)
        self.motion.reset(envs, *self.world.robot.read_states())
        if self.task is not None:
            self.judge.reset(envs, np.array([s.objects[self.task.object][0] for s in scenes]),
                             [s.place for s in scenes])
        self.steps[envs] = 0
        self.stall_steps[envs] = 0
        for e, s in zip(envs, scenes):
            self.scenes[e] = s
        if self._goal is not None:
            self._goal[envs] = self.world.ee_now()[envs]
        self.judge.update(self.world.observations(), self.world.scene.objects)

    def step(self, a: object) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Every environment one step with actions ``a`` (n_envs, action_dim) -> (observations, reward (n,),
        terminated (n,), truncated (n,), infos: one dict per environment)."""
        if any(scene is None for scene in self.scenes):
            e = next(i for i, scene in enumerate(self.scenes) if scene is None)
            raise InputError(f"environment {e} was never reset: call reset() before step()")
        a = checked(a, self.action_space, self.n)
        cmd, goal = command(self.world, self.options.action_mode, a)
        q_start, v_prev = self.world.robot.read_states()
        hits_before = self.world.robot.stops.hits.copy()
        self.world.advance(cmd)
        q, v = self.world.robot.read_states()
        self.motion.record(q, v, commanded(self.world, self.options.action_mode == "joint", cmd.q_goal))
        verdict = self.judge.update(self.world.observations(), self.world.scene.objects)
        self.steps += 1
        infos = self._infos(verdict, q)
        for info, hits in zip(infos, self.world.robot.stops.hits - hits_before):
            info["stop_hits"] = int(hits)
        if goal is not None:
            prev = self.world.ee_now() if self._goal is None else self._goal
            for info, s in zip(infos, self.stalls.diagnose(q_start, q, v, v_prev, goal, prev)):
                info.update(s)
            self._goal = goal
            self.stall_steps += [bool(i["stalled"]) for i in infos]
        terminated = verdict.success.copy()
        truncated = (self.steps >= self.max_steps) & ~terminated
        for e in np.flatnonzero(terminated | truncated):
            infos[e].update(reason=self.judge.reason(int(e)), episode_steps=int(self.steps[e]),
                            stall_steps=int(self.stall_steps[e]))
            infos[e].update(episode_info(self.motion.report(int(e))))
        self.world.controller_telemetry_clear()
        return self.observe(), verdict.stage.astype(float), terminated, truncated, infos

    def _infos(self, verdict, q: np.ndarray) -> list[dict]:
        m = self.world.robot.model
        excess = np.maximum(np.maximum(m.q_lower - q, q - m.q_upper), 0.0).max(axis=1)
        ee, place = self._task_state(q)
        return [{"is_success": bool(verdict.success[e]), "stage": int(verdict.stage[e]),
                 "place_error_m": float(verdict.place_error_m[e]), "limit_excess": float(excess[e]),
                 "collided": bool(verdict.collided[e]), "ee_pose": ee[e],
                 **({"place_target": place[e]} if place is not None else {})} for e in range(self.n)]

    @property
    def last_goal(self) -> np.ndarray | None:
        """The last end-effector step's targets (n_envs, n_arms, 7: position, quat wxyz; None: none yet)."""
        return self._goal

    def observe(self) -> dict:
        """Every environment's observation, batched: agent_pos (n, n_values) float32, environment_state (n, .)
        float32, pixels {camera: (n, h, w, 3) uint8}, as the options ask."""
        q = self.world.robot.read_states()[0]
        out = {}
        if self.options.agent_pos:
            out["agent_pos"] = self.world.layout.agent_pos(q).astype(np.float32)
        if self.options.environment_state and self.world.scene.objects:
            out["environment_state"] = self._environment_state()
        if self.pixels is not None:
            out["pixels"] = self.pixels.render(q, places=self.places())
        return out

    def _environment_state(self) -> np.ndarray:
        """Per environment every scene object's pose (7 each: position [m], quat wxyz modulo the object's symmetry
        (app.episode.object_state), environment frames), in the scene's order, then the place target (x, y [m])
        where the task has one: app.record's ``observation.environment_state``, so a policy trained on a recording
        reads the same values here."""
        poses = observed_poses(self.world.scene.object_poses(), self.run.scene_config.objects).reshape(self.n, -1)
        places = self.places()
        return (poses if places is None else np.concatenate([poses, places], axis=1)).astype(np.float32)

    def places(self) -> np.ndarray | None:
        """Each environment's place target (n, 2) [m] (zeros before its first reset), None for a task without
        one."""
        if self.world.object_name is None:
            return None
        return np.stack([s.place if s is not None and s.place is not None else np.zeros(2) for s in self.scenes])

    def _task_state(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Each arm's end-effector pose (n, n_arms, 7) and the place target (n, 2) or None without an object."""
        pos, quat = self.world.layout.ee_poses(q)
        return np.concatenate([pos, quat], axis=2), self.places()

    def close(self) -> None:
        if self.pixels is not None:
            self.pixels.close()
        self.world.close()


def not_copyable(env) -> InputError:
    """The error copying or pickling an environment raises: it owns a PyBullet world, which a copy would share
    (stepping the copy moved the original; closing it broke the original)."""
    return InputError(f"{type(env).__name__} cannot be copied or pickled: it owns a PyBullet world that a copy would "
                      "share; make another with app.envs.make_env / make_vec_env (or gym.make) instead")
