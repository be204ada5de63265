"""The sections of a scene file (``scenes/*.yaml``): robots and physics; its boxes, objects, grippers and named
cameras are the scene's own specs (app.specs), read as they are.

Each section is a frozen dataclass whose ``checks(at, ctx)`` lists what its values must be beside its fields
(rows for app.validation.raise_first; ``at(key)`` names the file and key path). Lengths in metres, angles in
radians (camera fields of view in degrees), times in seconds, quaternions (w, x, y, z).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.config.cameras import CameraConfig
from app.config.randomization import RandomizationConfig
from app.kinematics.compose import SEPARATOR
from app.kinematics.urdf import RobotDescription
from app.specs import BoxSpec, CameraStream, GripperSpec, LookSpec, ObjectSpec, starts_above
from app.specs.object_spec import starts_apart
from app.validation import Check, CheckContext, Where, nonzero


@dataclass(frozen=True)
class RobotConfig:
    """A robot: its description, base pose, end effector, start pose and gripper. ``arms`` names the end effectors
    of a description with several arms ({"left": "follower_left_ee_gripper_link", ...}); tasks address them by
    name (``task.arm``, the ``arms`` task). In a scene's ``robots:`` list each robot has a ``name``, its links
    and joints become ``NAME/...`` and it is the arm ``NAME`` (its ``ee_link``)."""

    name: str | None = None
    urdf: str = "assets/urdf/widowx_ai.urdf"
    base_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    package_dirs: tuple[str, ...] = ()
    xacro_args: dict | None = None  # $(arg NAME) values of a .xacro description
    ee_link: str = "ee_gripper_link"
    init_qpos: tuple[float, ...] | None = None
    gripper: GripperSpec | None = None  # None: the fingers are ordinary DOFs of the arm
    arms: dict | None = None  # arm name -> end-effector link, for a description with several arms
    grippers: tuple[GripperSpec, ...] = ()  # one per arm of such a description, each naming its ``arm``

    @property
    def grippers_by_arm(self) -> dict[str, GripperSpec]:
        """Arm name -> its gripper: the ``grippers`` of a description with several arms, or of a rig (the loader
        gives it its robots' own, each named after its robot, joints NAME/...); '' for the one ``gripper``."""
        return ({"": self.gripper} if self.gripper is not None else {}) | {g.arm: g for g in self.grippers}

    def checks(self, at: Where, ctx: CheckContext, joint_prefix: str = "") -> list[Check]:
        """The base orientation and xacro arguments; with the model (ctx.model), the gripper or the grippers of
        the arms (each naming one arm, at most once, never beside ``gripper``)."""
        rows = [(at("base_quat"), nonzero(self.base_quat), "must be a nonzero (w, x, y, z) quaternion")]
        rows += [(at("xacro_args", key), isinstance(value, (str, int, float, bool)),
                  f"must be a string or a number, got {value!r}") for key, value in (self.xacro_args or {}).items()]
        if self.gripper is not None:
            rows += self.gripper.checks(at.sub("gripper"), ctx.model, joint_prefix, self.ee_link)
        arms, named = sorted(self.arms or {}), [g.arm for g in self.grippers]
        for i, g in enumerate(self.grippers):
            rows.append((at("grippers", i, "arm"), g.arm in arms and named.count(g.arm) == 1 and self.gripper is None,
                         f"must name one of the arms {arms} (robot.arms), each at most once, with no robot.gripper "
                         f"beside robot.grippers; got {g.arm!r}"))
            rows += g.checks(at.sub("grippers", i), ctx.model, joint_prefix, (self.arms or {}).get(g.arm))
        return rows


@dataclass(frozen=True)
class SceneConfig:
    """A world: one robot (or ``robots``: several, composed into one rig), an optional table and floor, static
    obstacles, dynamic objects, physics, camera.
    ``solver_iterations``: PyBullet's constraint solver iterations per step (None: PyBullet's default, 50; a
    body of many motors, e.g. two arms in one rig, needs more for them to follow their commands);
    ``cone_friction``: PyBullet's friction cone (its default) or, false, the cheaper pyramid approximation."""

    robot: RobotConfig = field(default_factory=RobotConfig)  # with robots: the rig (set by the loader)
    robots: tuple[RobotConfig, ...] = ()
    table: BoxSpec | None = None
    floor: BoxSpec | None = None
    obstacles: tuple[BoxSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    physics_hz: float = 240.0
    solver_iterations: int | None = None
    cone_friction: bool = True
    camera: CameraConfig = field(default_factory=CameraConfig)
    cameras: tuple[CameraStream, ...] = ()  # named cameras recorded as observations (app.record)
    look: LookSpec = field(default_factory=LookSpec)  # how pictures look: plain or kit (app.specs.look_spec)
    randomization: RandomizationConfig | None = None  # what each episode draws (app.config.randomization)
    # the robot's description, read and parsed once by the loader (app.config.robots.load_description)
    description: RobotDescription | None = field(default=None, compare=False, repr=False, metadata={"internal": True})
    # the look's robot (look.robot_urdf), read and checked once by the loader (app.config.look_robot.load_drawn)
    drawn: RobotDescription | None = field(default=None, compare=False, repr=False, metadata={"internal": True})

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Physics, then every section's own checks (each at its key), and the names that must differ."""
        rows = [(at("physics_hz"), 1 <= self.physics_hz <= 10000, f"must be in [1, 10000] Hz, got {self.physics_hz}"),
                (at("solver_iterations"), self.solver_iterations is None or 1 <= self.solver_iterations <= 1000,
                 f"must be 1..1000 (or omitted: PyBullet's 50), got {self.solver_iterations}")]
        rows += self.camera.checks(at.sub("camera"), ctx) + self.look.checks(at.sub("look"))
        if self.randomization is not None:
            rows += self.randomization.checks(at.sub("randomization"), ctx)
        if self.robots:
            for i, r in enumerate(self.robots):
                rows += r.checks(at.sub("robots", i), ctx, f"{r.name}{SEPARATOR}")
        else:
            rows += self.robot.checks(at.sub("robot"), ctx)
        boxes = [(at.sub(key), box) for key, box in (("table", self.table), ("floor", self.floor)) if box is not None]
        for where, box in boxes + [(at.sub("obstacles", i), b) for i, b in enumerate(self.obstacles)]:
            rows += box.checks(where, ctx.model)
        names = [b.name for b in (self.table, self.floor, *self.obstacles) if b is not None]
        twice = sorted({n for n in names if names.count(n) > 1})
        rows.append((at("obstacles"), not twice, f"box name(s) {twice} used twice (table, floor and obstacles need "
                                                 "their own names)"))
        for i, o in enumerate(self.objects):
            rows.append((at("objects", i, "name"), o.name not in names,
                         f"{o.name!r} is already the name of a box or an object; names are unique"))
            rows += o.checks(at.sub("objects", i), ctx.model)
            if self.table is not None:
                rows.append(starts_above(o, self.table, at("objects", i, "pos_range" if o.pos_range else "pos")))
            rows.append(starts_apart(o, list(self.objects[:i]), at("objects", i, "pos")))
            names.append(o.name)
        cams = [c.name for c in self.cameras]
        rows.append((at("cameras"), len(set(cams)) == len(cams), f"camera names must differ, got {cams}"))
        for i, c in enumerate(self.cameras):
            rows += c.checks(at.sub("cameras", i), ctx.model)
        return rows
