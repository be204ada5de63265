"""Between the simulator and a run's motion: the motion for a run (time-only, script, or pick-and-place), the
objects' start poses drawn from the seed, what a feedback motion observes each control tick, and what goes
back to the simulator (the gripper's command, the object rows the fingers may touch)."""

from __future__ import annotations

import numpy as np

from app.config.schema import ObjectSection, RunConfig
from app.control.grasps import GraspGeometry
from app.control.observation import Observation
from app.control.pick_place import PickPlaceSequencer, PickPlaceMotion, draw_places
from app.kinematics.base_frame import BaseFrame
from app.sim.objects import ObjectSpec
from app.sim.robot import Robot
from app.sim.scene import Scene


def object_spec(section: ObjectSection) -> ObjectSpec:
    """The simulator's ObjectSpec of a scene file's object (its file already resolved by the loader)."""
    return ObjectSpec(section.name, section.shape, section.size, section.radius, section.height,
                      section.file, section.scale, section.mass,
                      section.friction, section.spinning_friction, section.rolling_friction, section.rgba,
                      section.pos, _yaw_quat(np.array(section.yaw)))


def _yaw_quat(yaw: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of rotations about the vertical by yaw (...,) [rad] -> (..., 4)."""
    z = np.zeros_like(yaw)
    return np.stack([np.cos(yaw / 2), z, z, np.sin(yaw / 2)], axis=-1)


def object_starts(run: RunConfig, n_envs: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every object's start pose in each of ``n_envs`` environments: name -> (pos (n_envs, 3) [m], quat
    (n_envs, 4) wxyz), drawn from ``pos_range``/``yaw_range`` by the generator seeded (seed, 1, k) for the
    k-th object (fixed where no range is given), so a worker's share slices the same draws."""
    out = {}
    for k, obj in enumerate(run.scene_config.objects):
        rng = np.random.default_rng([run.seed, 1, k])
        pos = np.tile(np.asarray(obj.pos, dtype=float), (n_envs, 1))
        if obj.pos_range is not None:
            lo, hi = np.asarray(obj.pos_range, dtype=float)
            pos = rng.uniform(lo, hi, (n_envs, 3))
        yaw = np.full(n_envs, obj.yaw) if obj.yaw_range is None else rng.uniform(*obj.yaw_range, n_envs)
        out[obj.name] = (pos, _yaw_quat(yaw))
    return out


def make_motion(run: RunConfig, robot: Robot | None, n_envs: int, envs: np.ndarray | None = None):
    """The run's motion for ``n_envs`` environments, or for the environments ``envs`` of them (draws sliced)."""
    task, base_pos = run.task, np.array(run.scene_config.robot.base_pos)
    if not isinstance(task, PickPlaceMotion):  # a motion driven by time makes its own target source
        return task.targets(n_envs, base_pos, run.seed, envs)
    pos, _ = object_starts(run, n_envs)[task.object]
    places = draw_places(task, pos[:, :2], run.seed)
    if envs is not None:
        pos, places = pos[np.asarray(envs, dtype=int)], places[np.asarray(envs, dtype=int)]
    obj = next(o for o in run.scene_config.objects if o.name == task.object)
    spec = object_spec(obj)
    geometry = GraspGeometry(spec.half_extents(), obj.shape in ("cylinder", "sphere"))
    g = robot.gripper
    axes = (run.scene_config.robot.gripper.approach_axis, run.scene_config.robot.gripper.closing_axis)
    collision = None
    if task.grasp_collision:  # the table, the obstacles and the arm itself (its sampled pairs) by the spheres
        boxes = tuple(b.name for b in (run.scene_config.table, *run.scene_config.obstacles) if b is not None)
        collision = robot.sphere_model(boxes)
    return PickPlaceSequencer(task, robot.model, run.scene_config.robot.ee_link, BaseFrame(*robot.base_frames()),
                           geometry, places, pos[:, 2], g.max_opening, axes, robot.arm_dofs, collision,
                           task.grasp_min_distance)


class Feedback:
    """Each control tick of a run with a gripper: observe (for a feedback motion), then command the gripper
    and release the held object's rows with the fingers."""

    def __init__(self, scene: Scene, robot: Robot, motion, ee_link: str):
        self.scene, self.robot, self.motion = scene, robot, motion
        self.ee = robot.model.link_index(ee_link)
        name = getattr(motion.task, "object", None) if hasattr(motion, "task") else None
        self.obj = scene.objects.get(name) if name else None
        self.opening: list[np.ndarray] = []  # per control tick (n_envs,): the fingers' gap [m] (telemetry)
        self.holding: list[np.ndarray] = []  # per control tick (n_envs,): every finger on the task's object
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

    def tick(self, t: float, q: np.ndarray, dt: float) -> None:
        """At t [s], from the measured joints q (n_envs, n_dofs): observe (feedback motions), then the gripper's
        command over a tick of dt [s] and the released rows."""
        motion, r = self.motion, self.robot
        if getattr(motion, "feedback", False):
            obs = self.observe(q)
            motion.observe(t, obs)
            closing, measured, holding = motion.closing, obs.closing, obs.contact.all(axis=1)
            r.released = [frozenset([self.obj.name]) if rel else frozenset() for rel in motion.released]
            held, arm = getattr(motion, "holding", None), next(iter(r.grippers), None)
            r.holding = [{self.obj.name: arm} if held is not None and held[e] and arm is not None else {}
                         for e in range(r.n_envs)]
        else:
            closing = motion.closing_at(t) if hasattr(motion, "closing_at") else np.zeros(r.n_envs)
            measured, holding = r.gripper.state(q).closing, np.zeros(r.n_envs, dtype=bool)
        self.opening.append(r.gripper.max_opening * (1.0 - measured))  # linear in the fingers' travel
        self.holding.append(holding)
        r.gripper.command(closing, q, dt)

    def telemetry(self) -> dict[str, np.ndarray]:
        """The gripper's per-tick record: gripper_opening_m, gripper_holding (n_ticks, n_envs)."""
        n = self.robot.n_envs
        return {"gripper_opening_m": np.array(self.opening).reshape(-1, n),
                "gripper_holding": np.array(self.holding, dtype=bool).reshape(-1, n)}
