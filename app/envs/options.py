"""What a Gymnasium environment over a run config offers: its observation type, action mode, cameras and time
limit, as a frozen dataclass that checks its own values (``EnvOptions(...).check()``)."""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import InputError

OBS_TYPES = ("state", "pixels", "pixels_agent_pos", "pixels_state")  # gym-aloha's names, and both kinds of state
ACTION_MODES = ("joint", "ee_pose", "ee_delta")


@dataclass(frozen=True)
class EnvOptions:
    """Options of app.envs' environments.

    Attributes:
        obs_type: ``state`` (``agent_pos`` and ``environment_state``), ``pixels`` (the cameras only),
            ``pixels_agent_pos`` (cameras and ``agent_pos``: what LeRobot's ACT reads) or ``pixels_state``
            (everything).
        action_mode: ``joint`` (absolute joint targets in the dataset's layout: 6 joints [rad] and the gripper's
            finger position [m] per arm, as ``app.record``'s ``action``), ``ee_pose`` (per arm the end effector's
            position [m], quaternion (w, x, y, z) in the environment frame, then the gripper [m]) or ``ee_delta``
            (per arm a position change [m] and a rotation vector [rad] in the environment frame, then the
            gripper [m]), the end-effector modes turned into joints by the run's controller.
        cameras: Names of the scene's cameras to observe (None: all; a scene without cameras gets one default
            ``cam_high``). image_size: (height, width) [px] every observed camera renders at (None: its own).
        max_episode_steps: Steps before truncation (None: the run's duration at ``fps``).
        fps: Environment steps per second (None: the run's ``video.fps``, the rate ``app.record`` writes).
    """

    obs_type: str = "pixels_agent_pos"
    action_mode: str = "joint"
    cameras: tuple[str, ...] | None = None
    image_size: tuple[int, int] | None = None
    max_episode_steps: int | None = None
    fps: int | None = None

    def check(self) -> EnvOptions:
        """Self, or InputError naming the option and what it allows."""
        if self.obs_type not in OBS_TYPES:
            raise InputError(f"obs_type {self.obs_type!r} is not one of {list(OBS_TYPES)}")
        if self.action_mode not in ACTION_MODES:
            raise InputError(f"action_mode {self.action_mode!r} is not one of {list(ACTION_MODES)}")
        if self.image_size is not None and not (len(self.image_size) == 2 and all(
                isinstance(v, int) and 16 <= v <= 4096 and v % 2 == 0 for v in self.image_size)):
            raise InputError(f"image_size must be (height, width), each an even 16..4096 px, got {self.image_size}")
        if self.max_episode_steps is not None and (isinstance(self.max_episode_steps, bool) or not (
                isinstance(self.max_episode_steps, int) and 1 <= self.max_episode_steps <= 1_000_000)):
            raise InputError(f"max_episode_steps must be a whole number 1..1000000, got {self.max_episode_steps!r}")
        if self.fps is not None and (isinstance(self.fps, bool) or not (isinstance(self.fps, int) and 1 <= self.fps <= 240)):
            raise InputError(f"fps must be a whole number 1..240 steps per second, got {self.fps!r}")
        return self

    @property
    def pixels(self) -> bool:
        return self.obs_type.startswith("pixels")

    @property
    def agent_pos(self) -> bool:
        return self.obs_type != "pixels"

    @property
    def environment_state(self) -> bool:
        return self.obs_type in ("state", "pixels_state")
