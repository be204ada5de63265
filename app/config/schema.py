"""The shape of scene files (``scenes/*.yaml``) and run files (``configs/*.yaml``).

Every field has a type the loader checks; nested sections are dataclasses too. Lengths are
in metres, angles in radians, times in seconds, quaternions (w, x, y, z). The ``controller`` and
``task`` sections are typed by their ``type`` key: each type is its own frozen dataclass, defined
beside the code it configures (app.control), and only its keys are valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.config.cameras import CameraConfig  # noqa: F401 - the schema's names, in one place
from app.config.randomization import RandomizationConfig
from app.config.scene_sections import RobotConfig, SceneConfig  # noqa: F401
from app.control.controllers import CONTROLLER_TYPES, ControllerConfig, PoseIKControllerConfig
from app.control.motions import CircleMotion, PoseMotion
from app.tasks import TASK_TYPES, task_type
from app.validation import Check, CheckContext, Where, file_name_problem, finite

MAX_DURATION = 3600.0  # [s] of simulated time in one run
MAX_VIDEO_GB = 2.0  # video frames are held in memory until encoded
MAX_ENVS_CEILING = 65536  # the largest max_envs a run file may set


@dataclass(frozen=True)
class VideoConfig:
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
    camera: str | None = None  # a named camera of the scene (cameras:) to film from, in environment follow_env
    # (0 if unset; a camera on a link follows that environment's link); None: the scene camera
    show_spheres: bool = False  # draw the collision model's link spheres (app.collision) over the robot (debugging)

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Rate, size (its own or the scene camera's: then the scene's key is named), the memory the frames take,
        the environment followed, the framing, the render processes, the file name, the named camera."""
        run, cam = ctx.run, ctx.scene.camera
        w, h = self.width or cam.width, self.height or cam.height
        size_at = lambda k: at(k) if getattr(self, k) else ctx.scene_at("camera", k)  # noqa: E731
        frames = math.ceil(run.duration * self.fps) + 1 if finite(run.duration) and run.duration <= MAX_DURATION else 0
        gigabytes = frames * w * h * 3 / 1e9
        n_envs = run.n_envs or 1
        names = [c.name for c in ctx.scene.cameras]
        return [
            (at("fps"), 1 <= self.fps <= 240, f"must be 1..240 frames per second, got {self.fps}"),
            (at("axis_length"), 0 < self.axis_length <= 10, f"must be a length in (0, 10] m, got {self.axis_length}"),
            (size_at("width"), 16 <= w <= 4096 and w % 2 == 0, f"must be an even number in 16..4096 (H.264), got {w}"),
            (size_at("height"), 16 <= h <= 4096 and h % 2 == 0, f"must be an even number in 16..4096 (H.264), got {h}"),
            (at.locate(at.path), not self.enabled or gigabytes <= MAX_VIDEO_GB,
             f"{frames} frames of {w}x{h} would hold {gigabytes:.1f} GB in memory (limit {MAX_VIDEO_GB} GB); lower "
             "video.fps, the size or the duration, or run with --no-video"),
            (at("follow_env"), self.follow_env is None or 0 <= self.follow_env < n_envs,
             f"must be an environment index in 0..{n_envs - 1} (or omitted), got {self.follow_env}"),
            (at("framing"), self.framing in ("auto", "scene"), f"must be 'auto' or 'scene', got {self.framing!r}"),
            (at("workers"), self.workers is None or 0 <= self.workers <= 32,
             f"must be 0..32 render processes (0: render in this process; omitted: one per CPU), got {self.workers}"),
            _file_name(at("filename"), self.filename, ".mp4"),
            (at("camera"), self.camera is None or self.camera in names,
             f"{self.camera!r} is not a named camera of the scene; its cameras: {names}"),
        ]


@dataclass(frozen=True)
class ReportConfig:
    enabled: bool = True
    filename: str = "report.json"
    plot: bool = True
    plot_filename: str = "tracking_error.png"

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        return [_file_name(at("filename"), self.filename, ".json"),
                _file_name(at("plot_filename"), self.plot_filename, ".png")]


def _file_name(where: str, name: str, suffix: str) -> Check:
    problem = file_name_problem(name, suffix)
    return where, problem is None, problem or ""


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
    motion: PoseMotion = field(default_factory=CircleMotion,  # the YAML key is task: (users' word for it)
                               metadata={"types": TASK_TYPES, "default_type": "circle", "key": "task",
                                         "resolve": task_type})
    video: VideoConfig = field(default_factory=VideoConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    out_dir: str = "videos"
    randomization: RandomizationConfig | None = None  # replaces the scene's (app.config.randomization)
    # resolved at load time, not read from the file
    scene_config: SceneConfig = field(default_factory=SceneConfig, metadata={"internal": True})
    name: str = field(default="run", metadata={"internal": True})

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Counts, time, seed, then the sections' own checks: video, report, the scene (``ctx.scene``, at
        ``ctx.scene_at``), controller, and last the task (which names the scene's objects and arms)."""
        step = 1.0 / ctx.scene.physics_hz if ctx.scene.physics_hz > 0 else 0.0  # its range: the scene's check
        n = self.n_envs or 1
        return [
            (at("workers"), 1 <= self.workers <= max(1, n),
             f"must be 1..n_envs={n} processes (each needs an environment), got {self.workers}"),
            (at("env_spacing"), all(0 <= d <= 1e3 for d in self.env_spacing),
             f"must be two distances in [0, 1000] m between neighbouring environments, got {list(self.env_spacing)}"),
            (at("max_envs"), 1 <= self.max_envs <= MAX_ENVS_CEILING,
             f"must be 1..{MAX_ENVS_CEILING} (each environment costs ~20 MB and build time), got {self.max_envs}"),
            (at("n_envs"), self.n_envs is None or 1 <= self.n_envs <= self.max_envs,
             f"must be 1..max_envs={self.max_envs} (or omitted), got {self.n_envs}; set max_envs to allow more"),
            (at("duration"), finite(self.duration) and 0 < self.duration <= MAX_DURATION,
             f"must be a finite time in (0, {MAX_DURATION:g}] s, got {self.duration}"),
            (at("duration"), not finite(self.duration) or self.duration * (1 + 1e-9) >= step,
             f"must be at least one physics step (the first control tick), 1/physics_hz = {step:.6g} s, got "
             f"{self.duration:g} s"),
            (at("seed"), 0 <= self.seed < 2 ** 32, f"must be in 0..2**32-1, got {self.seed}"),
        ] + (self.video.checks(at.sub("video"), ctx) + self.report.checks(at.sub("report"), ctx)
             + ctx.scene.checks(ctx.scene_at, ctx) + self.controller.checks(at.sub("controller"), ctx)
             + self.motion.checks(at.sub("task"), ctx)
             + ([] if self.randomization is None else self.randomization.checks(at.sub("randomization"), ctx)))


__all__ = ["CameraConfig", "ControllerConfig", "ReportConfig", "RobotConfig", "RunConfig", "SceneConfig",
           "VideoConfig"]
