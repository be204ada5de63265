"""The sections of a scene file (``scenes/*.yaml``): robots, grippers, boxes, objects, cameras, physics.

Each section is a frozen dataclass whose ``checks(at, ctx)`` lists what its values must be beside its fields
(rows for app.validation.raise_first; ``at(key)`` names the file and key path). Lengths in metres, angles in
radians (camera fields of view in degrees), times in seconds, quaternions (w, x, y, z).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app.config.cameras import CameraSection, CameraStreamSection
from app.kinematics.compose import SEPARATOR
from app.kinematics.urdf import RobotDescription
from app.manipulation_defaults import GRIPPER, OBJECT
from app.validation import Check, CheckContext, Where, nonzero

AXIS_NAMES = ("x", "y", "z", "+x", "+y", "+z", "-x", "-y", "-z")


@dataclass(frozen=True)
class GripperSection:
    """The fingers: which joints, where open and closed are, how hard they squeeze. Defaults: the WidowX AI.

    Attributes:
        joints: The finger joints (prismatic or revolute), commanded by the gripper alone.
        open, closed: Joint values [m or rad] when open / closed, one per joint; None: the upper / lower limit.
        force: Motor force cap of each finger [N] (or [N m]): never above the URDF effort.
        friction: Lateral friction coefficient of the finger links' contacts.
        approach_axis: The end-effector axis that points at the object in a grasp ("x", "-z", ...).
        closing_axis: The end-effector axis along which the fingers close.
        mimic: Tie two fingers by a gear constraint (they move as one and keep the object centred).
    """

    joints: tuple[str, ...] = ("left_carriage_joint", "right_carriage_joint")
    open: tuple[float, ...] | None = None
    closed: tuple[float, ...] | None = None
    force: float = GRIPPER.force
    friction: float = GRIPPER.friction
    approach_axis: str = GRIPPER.approach_axis
    closing_axis: str = GRIPPER.closing_axis
    mimic: bool = GRIPPER.mimic  # two fingers tied by a JOINT_GEAR constraint (the URDF's <mimic>): moving as one
    arm: str | None = None  # in robot.grippers of a description with several arms: the arm (robot.arms) it is on

    def checks(self, at: Where, ctx: CheckContext, joint_prefix: str = "") -> list[Check]:
        """Against the robot's model (ctx.model; nothing before it loaded): the joints (named ``joint_prefix``
        + joint in the model: a rig's robot's), the force (never above the URDF effort), the axes, open/closed."""
        model = ctx.model
        if model is None:
            return []
        joints = [joint_prefix + j for j in self.joints]
        dofs = list(model.dof_names)
        bad = [j for j in joints if j not in dofs]
        rows = [(at("joints"), len(joints) >= 1 and not bad and len(set(joints)) == len(joints),
                 f"{joints}: must name distinct movable joints of the robot, one per finger; "
                 f"{'unknown ' + str(bad) + '; ' if bad else ''}valid: {dofs}")]
        if bad or not joints:
            return rows
        effort = min(model.effort_max[model.dof_index(j)] for j in joints)
        rows += [
            (at("force"), 0 < self.force <= effort,
             f"must be in (0, {effort:g}] N (the URDF effort of {joints}), got {self.force}"),
            (at("friction"), self.friction >= 0, f"must be >= 0, got {self.friction}"),
            (at("approach_axis"), self.approach_axis in AXIS_NAMES,
             f"{self.approach_axis!r} is not one of {list(AXIS_NAMES)}"),
            (at("closing_axis"), self.closing_axis in AXIS_NAMES
             and self.closing_axis.lstrip("+-") != self.approach_axis.lstrip("+-"),
             f"{self.closing_axis!r} must be one of {list(AXIS_NAMES)} and differ from approach_axis "
             f"{self.approach_axis!r}"),
        ]
        for name, values in (("open", self.open), ("closed", self.closed)):
            if values is not None:
                ok = len(values) in (1, len(joints)) and all(
                    model.q_lower[model.dof_index(j)] <= v <= model.q_upper[model.dof_index(j)]
                    for j, v in zip(joints, values * len(joints) if len(values) == 1 else values))
                rows.append((at(name), ok, f"needs one value per joint {joints} (or one for all) within their "
                                           f"limits, got {list(values)}"))
        return rows


@dataclass(frozen=True)
class RobotSection:
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
    gripper: GripperSection | None = None  # None: the fingers are ordinary DOFs of the arm
    arms: dict | None = None  # arm name -> end-effector link, for a description with several arms
    grippers: tuple[GripperSection, ...] = ()  # one per arm of such a description, each naming its ``arm``

    def checks(self, at: Where, ctx: CheckContext, joint_prefix: str = "") -> list[Check]:
        """The base orientation and xacro arguments; with the model (ctx.model), the gripper or the grippers of
        the arms (each naming one arm, at most once, never beside ``gripper``)."""
        rows = [(at("base_quat"), nonzero(self.base_quat), "must be a nonzero (w, x, y, z) quaternion")]
        rows += [(at("xacro_args", key), isinstance(value, (str, int, float, bool)),
                  f"must be a string or a number, got {value!r}") for key, value in (self.xacro_args or {}).items()]
        if self.gripper is not None:
            rows += self.gripper.checks(at.sub("gripper"), ctx, joint_prefix)
        arms, named = sorted(self.arms or {}), [g.arm for g in self.grippers]
        for i, g in enumerate(self.grippers):
            rows.append((at("grippers", i, "arm"), g.arm in arms and named.count(g.arm) == 1 and self.gripper is None,
                         f"must name one of the arms {arms} (robot.arms), each at most once, with no robot.gripper "
                         f"beside robot.grippers; got {g.arm!r}"))
            rows += g.checks(at.sub("grippers", i), ctx, joint_prefix)
        return rows


OBJECT_SHAPES = ("box", "cylinder", "sphere", "urdf", "mesh")  # what app.sim.objects builds (a test holds them equal)


@dataclass(frozen=True)
class ObjectSection:
    """A dynamic rigid body, one copy per environment, its pose in the environment's frame.

    Attributes:
        shape: "box" (``size``), "cylinder" (``radius``, ``height``, axis vertical), "sphere" (``radius``),
            "urdf" or "mesh" (``file``, scaled by ``scale``; a mesh's collision shape is its convex hull).
        mass: [kg]; friction, spinning_friction, rolling_friction: contact coefficients.
        pos: Centre [m]; yaw: about the vertical [rad]. pos_range ((lo), (hi)) / yaw_range (lo, hi): each
            environment draws its own from the run's seed instead (pos_range replaces pos).
    """

    name: str = "cube"
    shape: str = OBJECT.shape
    size: tuple[float, float, float] = OBJECT.size
    radius: float = OBJECT.radius
    height: float = OBJECT.height
    file: str | None = None
    scale: float = OBJECT.scale
    mass: float = OBJECT.mass
    friction: float = OBJECT.friction
    spinning_friction: float = OBJECT.spinning_friction
    rolling_friction: float = OBJECT.rolling_friction
    rgba: tuple[float, float, float, float] = OBJECT.rgba
    pos: tuple[float, float, float] = OBJECT.pos
    yaw: float = 0.0
    pos_range: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    yaw_range: tuple[float, float] | None = None

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Shape, mass, sizes, friction, colour, file, ranges; a start inside the scene's table is an error."""
        rows = [
            (at("shape"), self.shape in OBJECT_SHAPES, f"{self.shape!r} is not one of {list(OBJECT_SHAPES)}"),
            (at("mass"), self.mass > 0, f"must be > 0 kg, got {self.mass}"),
            (at("size"), all(x > 0 for x in self.size), f"every side must be > 0 m, got {self.size}"),
            (at("radius"), self.radius > 0, f"must be > 0 m, got {self.radius}"),
            (at("height"), self.height > 0, f"must be > 0 m, got {self.height}"),
            (at("scale"), self.scale > 0, f"must be > 0, got {self.scale}"),
            (at("friction"), min(self.friction, self.spinning_friction, self.rolling_friction) >= 0,
             "friction, spinning_friction and rolling_friction must be >= 0"),
            (at("rgba"), all(0 <= x <= 1 for x in self.rgba), f"values must be in [0, 1], got {self.rgba}"),
            (at("file"), self.shape not in ("urdf", "mesh") or (self.file is not None and Path(self.file).is_file()),
             f"shape {self.shape!r} needs an existing file, got {self.file!r}"),
            (at("pos_range"), self.pos_range is None or all(lo <= hi for lo, hi in zip(*self.pos_range)),
             f"needs [[x_lo, y_lo, z_lo], [x_hi, y_hi, z_hi]] with lo <= hi, got {self.pos_range}"),
            (at("yaw_range"), self.yaw_range is None or self.yaw_range[0] <= self.yaw_range[1],
             f"needs [lo, hi] with lo <= hi [rad], got {self.yaw_range}"),
        ]
        table = ctx.scene.table
        if table is not None and self.shape in ("box", "cylinder", "sphere"):
            rows.append(self._above(table, at("pos_range" if self.pos_range else "pos")))
        return rows

    def half_height(self) -> float:
        """Half the object's vertical extent [m] (a sphere's radius)."""
        return {"box": self.size[2] / 2, "cylinder": self.height / 2}.get(self.shape, self.radius)

    def _above(self, table: BoxSection, where: str) -> Check:
        """A start that may overlap the table top (its footprint over the table) is an error."""
        low = self.pos if self.pos_range is None else self.pos_range[0]
        bottom = low[2] - self.half_height()
        top = table.pos[2] + table.size[2] / 2
        over = all(abs(low[a] - table.pos[a]) <= table.size[a] / 2 for a in (0, 1))
        return (where, not over or bottom >= top - 1e-3,
                f"object {self.name!r} would start inside the table: its bottom at z = {bottom:.4f} m, the table top "
                f"at z = {top:.4f} m; raise its z to at least {top + self.half_height():.4f} m")


@dataclass(frozen=True)
class BoxSection:
    name: str = "box"
    size: tuple[float, float, float] = (0.1, 0.1, 0.1)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        return [(at("size"), all(x > 0 for x in self.size), f"every side must be > 0 m, got {self.size}"),
                (at("rgba"), all(0 <= x <= 1 for x in self.rgba), f"values must be in [0, 1], got {self.rgba}")]


@dataclass(frozen=True)
class SceneConfig:
    """A world: one robot (or ``robots``: several, composed into one rig), an optional table and floor, static
    obstacles, dynamic objects, physics, camera.
    ``solver_iterations``: PyBullet's constraint solver iterations per step (None: PyBullet's default, 50; a
    body of many motors, e.g. two arms in one rig, needs more for them to follow their commands);
    ``cone_friction``: PyBullet's friction cone (its default) or, false, the cheaper pyramid approximation."""

    robot: RobotSection = field(default_factory=RobotSection)  # with robots: the rig (set by the loader)
    robots: tuple[RobotSection, ...] = ()
    table: BoxSection | None = None
    floor: BoxSection | None = None
    obstacles: tuple[BoxSection, ...] = ()
    objects: tuple[ObjectSection, ...] = ()
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    physics_hz: float = 240.0
    solver_iterations: int | None = None
    cone_friction: bool = True
    camera: CameraSection = field(default_factory=CameraSection)
    cameras: tuple[CameraStreamSection, ...] = ()  # named cameras recorded as observations (app.record)
    # the robot's description, read and parsed once by the loader (app.config.robots.load_description)
    description: RobotDescription | None = field(default=None, compare=False, repr=False, metadata={"internal": True})

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Physics, then every section's own checks (each at its key), and the names that must differ."""
        rows = [(at("physics_hz"), 1 <= self.physics_hz <= 10000, f"must be in [1, 10000] Hz, got {self.physics_hz}"),
                (at("solver_iterations"), self.solver_iterations is None or 1 <= self.solver_iterations <= 1000,
                 f"must be 1..1000 (or omitted: PyBullet's 50), got {self.solver_iterations}")]
        rows += self.camera.checks(at.sub("camera"), ctx)
        if self.robots:
            for i, r in enumerate(self.robots):
                rows += r.checks(at.sub("robots", i), ctx, f"{r.name}{SEPARATOR}")
        else:
            rows += self.robot.checks(at.sub("robot"), ctx)
        boxes = [(at.sub(key), box) for key, box in (("table", self.table), ("floor", self.floor)) if box is not None]
        for where, box in boxes + [(at.sub("obstacles", i), b) for i, b in enumerate(self.obstacles)]:
            rows += box.checks(where, ctx)
        names = [b.name for b in (self.table, self.floor, *self.obstacles) if b is not None]
        twice = sorted({n for n in names if names.count(n) > 1})
        rows.append((at("obstacles"), not twice, f"box name(s) {twice} used twice (table, floor and obstacles need "
                                                 "their own names)"))
        for i, o in enumerate(self.objects):
            rows.append((at("objects", i, "name"), o.name not in names,
                         f"{o.name!r} is already the name of a box or an object; names are unique"))
            rows += o.checks(at.sub("objects", i), ctx)
            names.append(o.name)
        cams = [c.name for c in self.cameras]
        rows.append((at("cameras"), len(set(cams)) == len(cams), f"camera names must differ, got {cams}"))
        for i, c in enumerate(self.cameras):
            rows += c.checks(at.sub("cameras", i), ctx)
        return rows
