"""Between the simulator and a motion of several arms with grippers (the hand-over): what each arm observes every
control tick, and what goes back: each gripper's command, and the contacts the motion means (GraspState: the
object rows the fingers may touch, the finger pairs of the two grippers left unwatched while they work side by
side, the arm carrying the object) for the collision rows."""

from __future__ import annotations

import numpy as np

from app.control.motion_protocol import ArmsFeedbackMotion
from app.control.observation import Observation
from app.ik.limits.distance import GraspState
from app.kinematics.arms import arm_link_groups
from app.sim.robot import Robot
from app.sim.scene import Scene


class ArmsFeedback:
    """Each control tick of a run whose motion works several arms with grippers: observe every arm, advance the
    motion, command each gripper, release the object's and the grippers' rows where the motion says so."""

    def __init__(self, scene: Scene, robot: Robot, motion: ArmsFeedbackMotion, arm_links: dict[str, str]):
        self.scene, self.robot, self.motion = scene, robot, motion
        self.arms = list(motion.arms)
        self.ee = {a: robot.model.link_index(arm_links[a]) for a in self.arms}
        groups = arm_link_groups(robot.model, [arm_links[a] for a in self.arms])
        pb_of = {name: i for name, i in robot.bodies[0].link_index.items()}
        self.links = {a: frozenset(pb_of[n] for n in g) for a, g in zip(self.arms, groups)}
        self.obj = scene.objects[motion.object_name]
        names = motion.arm_objects or {}  # what each arm handles and sees: its own object, else the motion's one
        self.objs = {a: scene.objects[names.get(a, motion.object_name)] for a in self.arms}
        n = robot.n_envs
        self.others = {a: [{ids[e] for key, ids in scene.box_ids.items() if key != self.objs[a].name}
                           for e in range(n)] for a in self.arms}
        names = {i: n for n, i in pb_of.items()}
        fingers = [sorted(names[i] for i in robot.grippers[a].pb_links) for a in self.arms]
        self.finger_pairs = frozenset((a, b) for a in fingers[0] for b in fingers[1]) | \
            frozenset((b, a) for a in fingers[0] for b in fingers[1])  # the first two arms' fingers, both ways
        self.judge = None  # the task's TaskJudge, fed every observation (app.episode.loop.make_feedback)
        self.opening: list[np.ndarray] = []  # the second arm's gap per tick (the video's note)
        self.codes: list[np.ndarray] = []  # per control tick (n_envs,): the motion's phase-or-failure code

    def observe(self, q: np.ndarray) -> dict[str, Observation]:
        """What each arm sees now (measured joints q (n_envs, n_dofs)), by arm name: the object it handles (the
        motion's ``arm_objects``, or its one object)."""
        r = self.robot
        R, p = r.model.link_frames(q)
        R_b, p_b = r.base_frames()
        contacts = [r.contact_links(e) for e in range(r.n_envs)]
        out = {}
        for a in self.arms:
            grip, obj = r.grippers[a], self.objs[a]
            obj_pos, obj_quat = obj.poses()
            speed = np.linalg.norm(obj.velocities()[0], axis=1)
            mine = [{body: links & self.links[a] for body, links in c.items()} for c in contacts]
            on_object = [m.get(obj.body_ids[e], set()) for e, m in enumerate(mine)]
            collided = np.array([any(b in self.others[a][e] for b, links in m.items() if links)
                                 or bool(on_object[e] - grip.pb_links) for e, m in enumerate(mine)])
            state = grip.state(q, on_object)
            ee_rot, ee_pos = R_b @ R[:, self.ee[a]], p[:, self.ee[a]] @ R_b.T + p_b
            out[a] = Observation(q, ee_pos, ee_rot, obj_pos, obj_quat, speed, state.closing, state.contact, collided)
        return out

    def tick(self, t: float, q: np.ndarray, dt: float) -> GraspState:
        """At t [s], from the measured joints q (n_envs, n_dofs): observe, advance, command; returns the contacts
        the motion means now."""
        r, motion = self.robot, self.motion
        seen = self.observe(q)
        motion.observe(t, seen)
        if self.judge is not None:
            self.judge.update(seen, self.scene.objects, motion.place)
        self.codes.append(motion.codes())
        for k, a in enumerate(self.arms):
            r.grippers[a].command(motion.closing[k], q, dt)
        taker = self.arms[1]  # the second arm's gripper (a hand-over's taker): the video's note
        self.opening.append(r.grippers[taker].max_opening * (1.0 - seen[taker].closing))
        holders = [self.arms[h] if h >= 0 else None for h in motion.holder]
        return GraspState.of_object(self.obj.name, motion.released, holders,
                                    [self.finger_pairs if x else frozenset() for x in motion.exchanging])

    def telemetry(self) -> dict[str, np.ndarray]:
        """episode_codes (n_ticks, n_envs): the motion's phase-or-failure code each control tick."""
        n = self.robot.n_envs
        return {"episode_codes": np.array(self.codes, dtype=np.int16).reshape(-1, n)} if self.codes else {}
