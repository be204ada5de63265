"""Between the simulator and a run's motion with one gripper: what a feedback motion observes each control tick,
and what goes back: the gripper's command, and the contacts the motion means (GraspState) for the collision
rows."""

from __future__ import annotations

import numpy as np

from app.control.motion_protocol import Motion
from app.control.observation import Observation
from app.ik.limits.distance import GraspState
from app.sim.robot import Robot
from app.sim.scene import Scene


class Feedback:
    """Each control tick of a run with a gripper: observe (for a feedback motion), then command the gripper
    and release the held object's rows with the fingers."""

    def __init__(self, scene: Scene, robot: Robot, motion: Motion, ee_link: str):
        self.scene, self.robot, self.motion = scene, robot, motion
        self.ee = robot.model.link_index(ee_link)
        name = motion.object_name
        self.obj = scene.objects.get(name) if name else None
        self.opening: list[np.ndarray] = []  # per control tick (n_envs,): the fingers' gap [m] (telemetry)
        self.holding: list[np.ndarray] = []  # per control tick (n_envs,): every finger on the task's object
        self.codes: list[np.ndarray] = []  # per control tick (n_envs,): a feedback motion's phase-or-failure code
        self.judge = None  # the task's TaskJudge, fed every observation (app.episode.loop.make_feedback)
        n = robot.n_envs  # per environment, the bodies the arm must not touch
        self.others = [{ids[e] for key, ids in scene.box_ids.items() if key != name} for e in range(n)]

    def observe(self, q: np.ndarray) -> Observation:
        """What the motion sees now (measured joints q (n_envs, n_dofs))."""
        r = self.robot
        R, p = r.model.link_frames(q)
        R_b, p_b = r.base_frames()
        ee_rot, ee_pos = R_b @ R[:, self.ee], p[:, self.ee] @ R_b.T + p_b  # base -> environment frame
        obj_pos, obj_quat = self.obj.poses()
        lin, _ = self.obj.velocities()
        contacts = [r.contact_links(e) for e in range(r.n_envs)]
        on_object = [c.get(self.obj.body_ids[e], set()) for e, c in enumerate(contacts)]
        grip = r.gripper.state(q, on_object)
        fingers = r.gripper.pb_links
        collided = np.array([any(body in self.others[e] for body in c) or bool(on_object[e] - fingers)
                             for e, c in enumerate(contacts)])
        return Observation(q, ee_pos, ee_rot, obj_pos, obj_quat, np.linalg.norm(lin, axis=1),
                           grip.closing, grip.contact, collided)

    def tick(self, t: float, q: np.ndarray, dt: float) -> GraspState:
        """At t [s], from the measured joints q (n_envs, n_dofs): observe (feedback motions), then the gripper's
        command over a tick of dt [s]; returns the contacts the motion means now (for the collision rows)."""
        motion, r = self.motion, self.robot
        if motion.feedback:
            obs = self.observe(q)
            motion.observe(t, obs)
            if self.judge is not None:
                self.judge.update({"": obs}, self.scene.objects, motion.place)
            self.codes.append(motion.codes())
            closing, measured, holding = motion.closing, obs.closing, obs.contact.all(axis=1)
            grasp = self._grasp(motion.released, motion.holder)
        else:
            closing = motion.closing_at(t)
            closing = np.zeros(r.n_envs) if closing is None else closing
            measured, holding = r.gripper.state(q).closing, self._holds_an_object(q)
            grasp = GraspState.nothing(r.n_envs)
        self.opening.append(r.gripper.max_opening * (1.0 - measured))  # linear in the fingers' travel
        self.holding.append(holding)
        r.gripper.command(closing, q, dt)
        return grasp

    def _holds_an_object(self, q: np.ndarray) -> np.ndarray:
        """(n_envs,) bool: every finger touches one of the scene's objects (a motion that names no object, such as
        a script, still holds what its fingers close on)."""
        r, held = self.robot, np.zeros(self.robot.n_envs, dtype=bool)
        if not self.scene.objects:
            return held
        contacts = [r.contact_links(e) for e in range(r.n_envs)]
        for obj in self.scene.objects.values():
            on_object = [c.get(obj.body_ids[e], set()) for e, c in enumerate(contacts)]
            held |= r.gripper.state(q, on_object).contact.all(axis=1)
        return held

    def _grasp(self, released: np.ndarray, holder: np.ndarray) -> GraspState:
        """The object's rows with the fingers dropped where ``released``; carried by the robot's one gripper where
        ``holder`` >= 0 (n_envs,)."""
        arm = next(iter(self.robot.grippers), None)
        return GraspState.of_object(self.obj.name, released, [arm if h >= 0 else None for h in holder])

    def telemetry(self) -> dict[str, np.ndarray]:
        """The gripper's per-tick record: gripper_opening_m, gripper_holding (n_ticks, n_envs)."""
        n = self.robot.n_envs
        codes = {"episode_codes": np.array(self.codes, dtype=np.int16).reshape(-1, n)} if self.codes else {}
        return {"gripper_opening_m": np.array(self.opening).reshape(-1, n),
                "gripper_holding": np.array(self.holding, dtype=bool).reshape(-1, n), **codes}
