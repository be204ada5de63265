"""How pictures of the scene look (the scene's ``look:``): ``plain`` (today's: flat colours, TinyRenderer's default
light, no shadows, no floor) or ``kit`` (closer to Trossen's kit: a maple tabletop and a concrete floor, both
textured, one light from above and in front with shadows). Any key beside ``style`` replaces the style's value;
``look: kit`` is short for ``look: {style: kit}``. Only pictures change: physics never sees the look.

Lighting is TinyRenderer's (``pybullet.getCameraImage``): one directional light ``light_direction`` (3,) (towards
the light, world frame), its colour ``light_color`` (3,) in [0, 1], the ambient, diffuse and specular coefficients,
and ``shadow``. A textured box's picture is its texture times ``table_tint`` (the tabletop) or white.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path

from PIL import Image

from app.validation import Check, Where

STYLES = ("plain", "kit")
TEXTURE_DIR = Path(__file__).resolve().parents[2] / "assets" / "textures"
TEXTURES = {"maple": TEXTURE_DIR / "maple.png", "concrete": TEXTURE_DIR / "concrete.png"}
FLOOR_NAME = "look_floor"  # the floor box a look adds where the scene has none
FLOOR_DROP = 0.74  # [m] from the table top down to the added floor (a desk's height)


@dataclass(frozen=True)
class LookSpec:
    """The look: a ``style`` of STYLES, each other field None (the style's value) or its own value.

    Attributes:
        shadow: TinyRenderer's shadows (a frame then costs ~1.7x: scripts/bench_look.py).
        light_direction: (3,) towards the light, world frame (None in ``plain``: TinyRenderer's default light).
        light_color: (3,) in [0, 1]. ambient, diffuse, specular: TinyRenderer's coefficients, each in [0, 1].
        table_texture, floor_texture: a texture of TEXTURES or a PNG file ('' : none).
        table_tint: (3,) in [0, 1], multiplies the tabletop's texture.
        floor: add a floor box under the table where the scene has no ``floor``.
        robot_urdf: a description of the same robot with its own meshes (a ROS description the user has, e.g.
            Trossen's ``wxai_base.urdf``; its ``package://`` meshes found in ``robot_package_dirs``) drawn in
            pictures in place of the scene's robot, which physics and IK keep; its movable joints must be the
            scene robot's, in its order (app.config.look_robot). One robot only (not a ``robots:`` rig).
        robot_rgb: (3,) in [0, 1], the colour of every link of the robot in pictures (None: as its file says).
    """

    style: str = "plain"
    shadow: bool | None = None
    light_direction: tuple[float, float, float] | None = None
    light_color: tuple[float, float, float] | None = None
    ambient: float | None = None
    diffuse: float | None = None
    specular: float | None = None
    table_texture: str | None = None
    floor_texture: str | None = None
    table_tint: tuple[float, float, float] | None = None
    floor: bool | None = None
    robot_urdf: str | None = None
    robot_package_dirs: tuple[str, ...] = ()
    robot_rgb: tuple[float, float, float] | None = None

    @classmethod
    def shorthand(cls, value: object) -> dict:
        """``look: kit`` (a style's name) as the mapping ``{style: kit}`` (app.config.loader.build asks)."""
        return {"style": value} if isinstance(value, str) else value

    def resolved(self) -> LookSpec:
        """Every field set: the style's values where this look gives none."""
        base = PRESETS.get(self.style, PRESETS["plain"])
        return replace(base, **{f.name: getattr(self, f.name) for f in fields(self)
                                if getattr(self, f.name) not in (None, ())})

    def is_plain(self) -> bool:
        """Whether pictures look as they did before looks existed (the plain style, nothing replaced)."""
        return self.resolved() == PRESETS["plain"]

    def render_kwargs(self) -> dict:
        """``pybullet.getCameraImage``'s lighting keywords for this look (plain without overrides: none beyond
        ``shadow=0``, the pictures of before the look existed)."""
        look = self.resolved()
        out: dict = {"shadow": int(bool(look.shadow))}
        if look.light_direction is not None:
            out["lightDirection"] = list(look.light_direction)
        if look.light_color is not None:
            out["lightColor"] = list(look.light_color)
        for key, value in (("lightAmbientCoeff", look.ambient), ("lightDiffuseCoeff", look.diffuse),
                           ("lightSpecularCoeff", look.specular)):
            if value is not None:
                out[key] = float(value)
        return out

    def texture_file(self, which: str) -> Path | None:
        """The PNG of ``which`` ('table' or 'floor'), None for none."""
        name = getattr(self.resolved(), f"{which}_texture") or ""
        return None if not name else TEXTURES.get(name, Path(name))

    def checks(self, at: Where, model=None) -> list[Check]:
        """The style, the light's direction and colour, the coefficients, the textures."""
        unit = lambda v: v is None or all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in v)  # noqa: E731
        rows = [(at("style"), self.style in STYLES, f"{self.style!r} is not one of {list(STYLES)}"),
                (at("light_direction"), self.light_direction is None or math.hypot(*self.light_direction) > 1e-9,
                 f"must be a nonzero vector towards the light, got {self.light_direction}"),
                (at("light_color"), unit(self.light_color), f"values must be in [0, 1], got {self.light_color}"),
                (at("table_tint"), unit(self.table_tint), f"values must be in [0, 1], got {self.table_tint}"),
                (at("robot_rgb"), unit(self.robot_rgb), f"values must be in [0, 1], got {self.robot_rgb}"),
                (at("robot_urdf"), self.robot_urdf is None or Path(self.robot_urdf).is_file(),
                 f"file not found: {self.robot_urdf}")]
        rows += [(at(k), getattr(self, k) is None or 0 <= getattr(self, k) <= 1,
                  f"must be in [0, 1], got {getattr(self, k)}") for k in ("ambient", "diffuse", "specular")]
        for k in ("table_texture", "floor_texture"):
            name = getattr(self, k)
            problem = None if not name or name in TEXTURES else texture_problem(Path(name))
            rows.append((at(k), problem is None, f"{name!r} is neither one of the textures {sorted(TEXTURES)} nor a "
                                                 f"PNG or JPEG file ({problem})"))
        return rows


MAX_TEXTURE = 4096  # [px] per side: what a texture may be (PyBullet keeps every one in memory, uncompressed)


def texture_problem(path: Path) -> str | None:
    """Why the image file ``path`` cannot texture a box (None when it can): missing, not a PNG or JPEG that
    decodes whole, or larger than MAX_TEXTURE pixels a side."""
    if not path.is_file():
        return "no such file"
    try:
        with Image.open(path) as image:
            if image.format not in ("PNG", "JPEG"):
                return f"a {image.format} image; a texture is a PNG or JPEG"
            if max(image.size) > MAX_TEXTURE:
                return f"{image.size[0]} x {image.size[1]} px; a texture is at most {MAX_TEXTURE} px a side"
            image.load()  # decodes every pixel: a truncated or damaged file fails here
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        return f"not an image that decodes ({type(exc).__name__}: {str(exc)[:120]})"
    return None


PRESETS = {
    "plain": LookSpec("plain", False, None, None, None, None, None, "", "", (1.0, 1.0, 1.0), False),
    "kit": LookSpec("kit", True, (0.35, -0.25, 1.0), (1.0, 0.97, 0.92), 0.62, 0.45, 0.08, "maple", "concrete",
                    (1.0, 1.0, 1.0), True),
}  # robot_urdf, robot_package_dirs and robot_rgb: none in either style (their defaults)
