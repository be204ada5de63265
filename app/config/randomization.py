"""The ``randomization:`` section of a scene or run file (the run's replaces the scene's whole): what each episode
draws from its seed (app.episode.randomize) and how far. Every range is [lo, hi]; a jitter j draws uniformly in
[-j, +j]; an omitted part draws nothing. Lengths in metres, angles in degrees, forces in newtons, colours in [0, 1].

    randomization:
      lighting: {direction_deg: 25, color: [[0.8, 0.8, 0.8], [1, 1, 1]], ambient: [0.4, 0.8], diffuse: [0.3, 0.6],
                 specular: [0.0, 0.2]}
      colors: {table: 0.1, objects: 0.2}
      cameras: {position: 0.02, target: 0.02, rotation_deg: 2, fov_deg: 3}
      objects: {size_scale: [0.9, 1.1], mass_scale: [0.7, 1.5], friction: [0.7, 1.2]}
      gripper: {force: [3, 6]}
      noise: {action_std: 0.002, observation_std: 0.001}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from app.validation import FOV_DEG, Check, CheckContext, Where

Range = tuple[float, float]
RGB = tuple[float, float, float]


def _range(at: Where, key: str, r: Range | None, lo: float, hi: float, unit: str, open_lo: bool = False) -> Check:
    """A [lo, hi] range within [lo, hi] of what is allowed (``open_lo``: the low bound itself excluded)."""
    ok = r is None or ((r[0] > lo if open_lo else r[0] >= lo) and r[0] <= r[1] <= hi)
    bound = f"{'(' if open_lo else '['}{lo:g}, {hi:g}]"
    return at(key), ok, f"must be [lo, hi] with lo <= hi within {bound}{unit}, got {r}"


def _jitter(at: Where, key: str, value: float, hi: float, unit: str) -> Check:
    return at(key), 0 <= value <= hi, f"must be in [0, {hi:g}]{unit}, got {value}"


@dataclass(frozen=True)
class LightingRandomization:
    """The light: its direction tilted up to ``direction_deg`` from the look's, its colour (per channel in
    [[r, g, b]_lo, [r, g, b]_hi]), TinyRenderer's ambient, diffuse and specular coefficients."""

    direction_deg: float = 0.0
    color: tuple[RGB, RGB] | None = None
    ambient: Range | None = None
    diffuse: Range | None = None
    specular: Range | None = None

    def checks(self, at: Where) -> list[Check]:
        color_ok = self.color is None or all(0 <= lo <= hi <= 1 for lo, hi in zip(*self.color))
        return [_jitter(at, "direction_deg", self.direction_deg, 80.0, " deg"),
                (at("color"), color_ok, f"must be [[r, g, b], [r, g, b]] with 0 <= lo <= hi <= 1, got {self.color}")
                ] + [_range(at, k, getattr(self, k), 0.0, 1.0, "") for k in ("ambient", "diffuse", "specular")]


@dataclass(frozen=True)
class ColorRandomization:
    """Each RGB channel moved by up to ``table`` (the tabletop; a textured one's tint) and ``objects`` (each
    object's own draw), clipped to [0, 1]."""

    table: float = 0.0
    objects: float = 0.0

    def checks(self, at: Where) -> list[Check]:
        return [_jitter(at, k, getattr(self, k), 1.0, "") for k in ("table", "objects")]


@dataclass(frozen=True)
class CameraRandomization:
    """Each named camera's own draw: a fixed one's eye and target moved by up to ``position`` / ``target`` along
    each axis; a link camera's offset moved by up to ``position`` and turned by up to ``rotation_deg`` about a
    random axis; every camera's vertical field of view changed by up to ``fov_deg``."""

    position: float = 0.0
    target: float = 0.0
    rotation_deg: float = 0.0
    fov_deg: float = 0.0

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        lo, hi = FOV_DEG
        fovs = [c.fov for c in ctx.scene.cameras]
        ok = all(lo <= f - self.fov_deg and f + self.fov_deg <= hi for f in fovs)
        return [_jitter(at, "position", self.position, 0.5, " m"), _jitter(at, "target", self.target, 0.5, " m"),
                _jitter(at, "rotation_deg", self.rotation_deg, 45.0, " deg"),
                _jitter(at, "fov_deg", self.fov_deg, 60.0, " deg"),
                (at("fov_deg"), ok, f"the cameras' fields of view {fovs} +- {self.fov_deg} must stay within "
                                    f"[{lo:g}, {hi:g}] deg")]


@dataclass(frozen=True)
class ObjectRandomization:
    """Every object's own draw: its sizes times ``size_scale`` (its start raised or lowered so it still rests
    where it rested), its mass times ``mass_scale``, its lateral friction coefficient in ``friction``."""

    size_scale: Range | None = None
    mass_scale: Range | None = None
    friction: Range | None = None

    def checks(self, at: Where) -> list[Check]:
        return [_range(at, "size_scale", self.size_scale, 0.0, 4.0, "", open_lo=True),
                _range(at, "mass_scale", self.mass_scale, 0.0, 100.0, "", open_lo=True),
                _range(at, "friction", self.friction, 0.0, 10.0, "")]


@dataclass(frozen=True)
class GripperRandomization:
    """Each gripper's finger force [N] drawn in ``force``: within (0, the URDF effort of its fingers]."""

    force: Range | None = None

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        rows = [_range(at, "force", self.force, 0.0, math.inf, " N", open_lo=True)]
        robot = ctx.scene.robot
        grippers = ([robot.gripper] if robot.gripper is not None else []) + list(robot.grippers)
        rows.append((at("force"), self.force is None or grippers, "the scene has no gripper to randomise"))
        if ctx.model is not None and self.force is not None:
            dofs = list(ctx.model.dof_names)
            joints = [j for g in grippers for j in g.joints if j in dofs]
            effort = min((ctx.model.effort_max[ctx.model.dof_index(j)] for j in joints), default=math.inf)
            rows.append((at("force"), self.force[1] <= effort,
                         f"must stay within the fingers' URDF effort {effort:g} N, got {list(self.force)}"))
        return rows


@dataclass(frozen=True)
class NoiseRandomization:
    """Gaussian noise of standard deviation ``observation_std`` on the recorded ``observation.state`` and
    ``action_std`` on the recorded ``action`` (each value, each frame; joints [rad], fingers [m]); the
    simulation itself runs noise-free."""

    action_std: float = 0.0
    observation_std: float = 0.0

    def checks(self, at: Where) -> list[Check]:
        return [_jitter(at, k, getattr(self, k), 0.1, " (rad or m)") for k in ("action_std", "observation_std")]


@dataclass(frozen=True)
class RandomizationConfig:
    """What each episode draws (see the module docstring); every part optional."""

    lighting: LightingRandomization | None = None
    colors: ColorRandomization | None = None
    cameras: CameraRandomization | None = None
    objects: ObjectRandomization | None = None
    gripper: GripperRandomization | None = None
    noise: NoiseRandomization | None = None
    seed_stream: int = field(default=38, metadata={"internal": True})  # the episode generator's stream key

    def checks(self, at: Where, ctx: CheckContext) -> list[Check]:
        """Every part's own rows (cameras and gripper against the scene and, in the second pass, the robot)."""
        rows: list[Check] = []
        for f in fields(self):
            part = getattr(self, f.name)
            if part is None or f.metadata.get("internal"):
                continue
            where = at.sub(f.name)
            rows += part.checks(where, ctx) if f.name in ("cameras", "gripper") else part.checks(where)
        return rows

    def scene_changes(self) -> bool:
        """Whether an episode's scene differs (anything beyond noise on the recorded columns)."""
        return any(getattr(self, k) is not None for k in ("lighting", "colors", "cameras", "objects", "gripper"))


def randomization_of(run) -> RandomizationConfig | None:
    """The run's ``randomization:``, else its scene's (None: none)."""
    return run.randomization if run.randomization is not None else run.scene_config.randomization
