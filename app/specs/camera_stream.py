"""A named camera recorded as an observation (``app.record``'s camera streams), at its own size and rate."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.validation import Check, Where, fov_check, nonzero


def not_parallel(a, b) -> bool:
    """Whether the 3-vectors ``a`` and ``b`` are not parallel (nor either one zero)."""
    cross = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    return math.hypot(*cross) > 1e-6 * max(math.hypot(*a) * math.hypot(*b), 1e-12)


FIXED_KEYS = ("eye", "target", "up")  # what places a fixed camera
ATTACHED_KEYS = ("offset_pos", "offset_quat")  # what places a camera on its link


@dataclass(frozen=True)
class CameraStream:
    """A named camera. Fixed: at ``eye`` looking at ``target`` (environment frame, ``up`` the picture's up).
    Attached: ``link`` names a robot link whose frame, offset by ``offset_pos`` [m] / ``offset_quat`` (w, x, y, z),
    is the camera's optical frame (x right, y down, z forward: ROS's ``*_color_optical_frame`` links, e.g. the
    wrist cameras of Trossen's ``wxai_follower.urdf`` and ``stationary_ai.urdf``). ``fov``: vertical field of
    view [deg]; a pinhole with square pixels; ``near``/``far`` [m] clip; ``fps``: frames per second (a dataset
    row holds the latest frame); ``width``/``height`` [px]."""

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
    depth: bool = False  # also record its depth (app.record: uint16 millimetres beside the dataset)

    @staticmethod
    def keys_problem(keys: set) -> str | None:
        """Why a scene file's camera keys contradict each other (None when they do not): a fixed camera is placed
        by eye, target and up, a camera on a link by the link and its offset, never both."""
        fixed, attached = sorted(keys & set(FIXED_KEYS)), sorted(keys & set(ATTACHED_KEYS))
        if "link" in keys and fixed:
            return (f"link {fixed} given together: a camera on a link is placed by the link and offset_pos/"
                    f"offset_quat; eye, target and up place a fixed camera; give one or the other")
        if "link" not in keys and attached:
            return f"{attached} place a camera on a link: give its link too (or eye and target for a fixed camera)"
        return None

    def checks(self, at: Where, model=None) -> list[Check]:
        """Name, size, rate, optics and pose; with the robot's ``model``, the link it is attached to."""
        fixed = self.link is None
        rows = [
            (at("name"), self.name.replace("_", "").isalnum(),
             f"letters, digits and _ only (a dataset key), got {self.name!r}"),
            (at("width"), 16 <= self.width <= 4096 and self.width % 2 == 0, f"must be even, 16..4096 px, got {self.width}"),
            (at("height"), 16 <= self.height <= 4096 and self.height % 2 == 0,
             f"must be even, 16..4096 px, got {self.height}"),
            (at("fps"), 0 < self.fps <= 1000, f"must be in (0, 1000] Hz, got {self.fps}"),
            fov_check(at("fov"), self.fov),
            (at("near"), 0 < self.near < self.far, f"must be > 0 and below far={self.far} m, got {self.near}"),
            (at("depth"), isinstance(self.depth, bool), f"must be true or false, got {self.depth!r}"),
            (at("offset_quat"), nonzero(self.offset_quat), "must be a nonzero (w, x, y, z) quaternion"),
            (at("eye"), not fixed or math.dist(self.eye, self.target) > 1e-6, "must differ from target"),
            (at("up"), not fixed or not_parallel(self.up, [t - e for t, e in zip(self.target, self.eye)]),
             "must not be parallel to the line of sight (target - eye)"),
        ]
        if model is not None:
            rows.append((at("link"), fixed or self.link in model.link_names,
                         f"unknown link {self.link!r}; links: {list(model.link_names)}"))
        return rows
