"""The shape of scene files (``scenes/*.yaml``) and run files (``configs/*.yaml``).

Every field has a type the loader checks; nested sections are dataclasses too. Lengths are
in metres, angles in radians, times in seconds, quaternions (w, x, y, z).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RobotSection:
    urdf: str = "assets/urdf/widowx_ai.urdf"
    base_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    package_dirs: tuple[str, ...] = ()
    xacro_args: dict | None = None  # $(arg NAME) values of a .xacro description
    ee_link: str = "ee_gripper_link"
    init_qpos: tuple[float, ...] | None = None


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
class SceneConfig:
    """A world: one robot, an optional table and floor, static obstacles, physics, camera."""

    robot: RobotSection = field(default_factory=RobotSection)
    table: BoxSection | None = None
    floor: BoxSection | None = None
    obstacles: tuple[BoxSection, ...] = ()
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    physics_hz: float = 240.0
    camera: CameraSection = field(default_factory=CameraSection)


@dataclass(frozen=True)
class ControllerSection:
    """``type``: 'ik' (one batched pose-IK call per tick) or 'qp' (constrained differential IK).

    ``mode`` (ik only): 'control' drives the motors, 'kinematic' sets the state directly.
    """

    type: str = "ik"
    mode: str = "control"
    control_hz: float | None = None
    gain: float = 10.0
    velocity_scale: float = 1.0
    accel_max: float | None = 40.0
    d_safe: float = 0.01
    gamma: float = 0.05
    detection_distance: float = 0.15
    self_pairs: tuple[tuple[str, str], ...] = ()
    pos_tol: float = 1e-4
    rot_tol: float = 1e-3
    max_iters: int = 60
    max_restarts: int = 5


@dataclass(frozen=True)
class TaskSection:
    """What the end effector (or fingertips) should do.

    type 'circle': each env circles ``center`` at ``radius`` with an angular speed drawn from
    ``angular_speed_range`` [rad/s]; 'static': hold ``center``; 'fingertips': the two fingertips
    follow targets ``gap`` apart (oscillating by ``gap_amplitude``) around a circling centre;
    'path': move through ``waypoints`` at ``speed`` [m/s], looping.
    """

    type: str = "circle"
    center: tuple[float, float, float] = (0.35, 0.0, 0.2)
    radius: float = 0.1
    angular_speed_range: tuple[float, float] = (-3.0, 3.0)
    quat: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 0.0)
    pos_mask: tuple[bool, bool, bool] = (True, True, True)
    rot_mask: tuple[bool, bool, bool] = (False, False, True)
    gap: float = 0.04
    gap_amplitude: float = 0.02
    links: tuple[str, ...] = ("left_fingertip", "right_fingertip")
    waypoints: tuple[tuple[float, float, float], ...] = ()
    speed: float = 0.1


@dataclass(frozen=True)
class VideoSection:
    enabled: bool = True
    fps: int = 30
    width: int | None = None
    height: int | None = None
    filename: str = "video.mp4"


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
    env_spacing: tuple[float, float] = (1.0, 1.0)
    duration: float = 4.0
    seed: int = 0
    controller: ControllerSection = field(default_factory=ControllerSection)
    task: TaskSection = field(default_factory=TaskSection)
    video: VideoSection = field(default_factory=VideoSection)
    report: ReportSection = field(default_factory=ReportSection)
    out_dir: str = "videos"
    # resolved at load time, not read from the file
    scene_config: SceneConfig = field(default_factory=SceneConfig, metadata={"internal": True})
    name: str = field(default="run", metadata={"internal": True})
