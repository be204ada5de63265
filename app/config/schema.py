"""The shape of scene files (``scenes/*.yaml``) and run files (``configs/*.yaml``).

Every field has a type the loader checks; nested sections are dataclasses too. Lengths are
in metres, angles in radians, times in seconds, quaternions (w, x, y, z). The ``controller`` and
``task`` sections are typed by their ``type`` key: each type is its own frozen dataclass, defined
beside the code it configures (app.control), and only its keys are valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.control.controllers import CONTROLLER_TYPES, PoseIKControllerConfig, QPControllerConfig
from app.control.motion_types import MOTION_TYPES
from app.control.motions import CircleMotion, PoseMotion

ControllerConfig = PoseIKControllerConfig | QPControllerConfig  # one config per controller, chosen by 'type'


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
    force: float = 5.0
    friction: float = 1.0
    approach_axis: str = "x"
    closing_axis: str = "y"
    mimic: bool = True  # the two fingers tied by a JOINT_GEAR constraint (the URDF's <mimic>): they move as one
    arm: str | None = None  # in robot.grippers of a description with several arms: the arm (robot.arms) it is on


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
    shape: str = "box"
    size: tuple[float, float, float] = (0.05, 0.05, 0.05)
    radius: float = 0.025
    height: float = 0.05
    file: str | None = None
    scale: float = 1.0
    mass: float = 0.05
    friction: float = 1.0
    spinning_friction: float = 0.002
    rolling_friction: float = 0.0
    rgba: tuple[float, float, float, float] = (0.85, 0.2, 0.15, 1.0)
    pos: tuple[float, float, float] = (0.35, 0.0, 0.025)
    yaw: float = 0.0
    pos_range: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    yaw_range: tuple[float, float] | None = None


@dataclass(frozen=True)
class BoxSection:
    name: str = "box"
    size: tuple[float, float, float] = (0.1, 0.1, 0.1)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0)


@dataclass(frozen=True)
class CameraSection:
    eye: tuple[float, float, float] = (1.2, -1.2, 0.9)
    target: tuple[float, float, float] = (0.3, 0.0, 0.15)
    fov: float = 50.0
    width: int = 480
    height: int = 360


@dataclass(frozen=True)
class CameraStreamSection:
    """A named camera recorded as an observation (``app.record``'s camera streams), at its own size and rate.

    Fixed: at ``eye`` looking at ``target`` (environment frame, ``up`` the picture's up). Attached: ``link`` names a
    robot link whose frame, offset by ``offset_pos`` [m] / ``offset_quat`` (w, x, y, z), is the camera's optical
    frame (x right, y down, z forward: ROS's ``*_color_optical_frame`` links, e.g. the wrist cameras of Trossen's
    ``wxai_follower.urdf`` and ``stationary_ai.urdf``). ``fov``: vertical field of view [deg]; a pinhole with
    square pixels; ``near``/``far`` [m] clip; ``fps``: frames per second (a dataset row holds the latest frame)."""

    name: str = "cam_high"
    link: str | None = None
    eye: tuple[float, float, float] = (0.0, -0.6, 0.6)
    target: tuple[float, float, float] = (0.3, 0.0, 0.05)
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    offset_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    offset_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    fov: float = 58.0
    width: int = 640
    height: int = 480
    fps: float = 30.0
    near: float = 0.01
    far: float = 10.0


@dataclass(frozen=True)
class SceneConfig:
    """A world: one robot (or ``robots``: several, composed into one rig), an optional table and floor, static
    obstacles, dynamic objects, physics, camera.
    ``solver_iterations``: PyBullet's contact solver iterations per step (None: PyBullet's default, 50);
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


@dataclass(frozen=True)
class VideoSection:
    """The mp4: rendered from recorded states by ``workers`` processes (None: one per CPU, at most 4; 0: in
    this process, after each frame is recorded); ``framing`` "auto" fills the picture with the environments
    seen along the scene camera's line of sight (or only ``follow_env``'s: a close-up), "scene" keeps the
    scene's camera as given."""

    enabled: bool = True
    fps: int = 30
    width: int | None = None
    height: int | None = None
    filename: str = "video.mp4"
    follow_env: int | None = None
    framing: str = "auto"
    workers: int | None = None
    axis_length: float = 0.08  # [m] of the target frames drawn (at least 1/16 of the picture's height)
    camera: str | None = None  # a fixed named camera of the scene (cameras:) to film from, in environment follow_env
    # (0 if unset); None: the scene camera
    show_spheres: bool = False  # draw the collision model's link spheres (app.collision) over the robot (debugging)


@dataclass(frozen=True)
class ReportSection:
    enabled: bool = True
    filename: str = "report.json"
    plot: bool = True
    plot_filename: str = "tracking_error.png"


@dataclass(frozen=True)
class RunConfig:
    """One run: which scene (and overrides of its fields), how many envs, for how long, with what."""

    scene: str = "scenes/table.yaml"
    scene_overrides: dict | None = None
    n_envs: int | None = None
    max_envs: int = 1024  # n_envs above this is refused (each environment costs ~20 MB and build time)
    env_spacing: tuple[float, float] = (1.0, 1.0)
    duration: float = 4.0
    seed: int = 0
    workers: int = 1  # processes (Ray actors) the environments are split over; 1: this process, no Ray
    controller: ControllerConfig = field(default_factory=PoseIKControllerConfig,
                                         metadata={"types": CONTROLLER_TYPES, "default_type": "ik"})
    task: PoseMotion = field(default_factory=CircleMotion, metadata={"types": MOTION_TYPES, "default_type": "circle"})
    video: VideoSection = field(default_factory=VideoSection)
    report: ReportSection = field(default_factory=ReportSection)
    out_dir: str = "videos"
    # resolved at load time, not read from the file
    scene_config: SceneConfig = field(default_factory=SceneConfig, metadata={"internal": True})
    name: str = field(default="run", metadata={"internal": True})
