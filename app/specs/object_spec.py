"""A dynamic rigid body, one copy per environment. Defaults: a 5 cm, 50 g cube on the table in front of the
WidowX AI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.specs.box_spec import BoxSpec
from app.validation import Check, Where, plain_name_problem

SHAPES = ("box", "cylinder", "sphere", "urdf", "mesh")


@dataclass(frozen=True)
class ObjectSpec:
    """A dynamic body, its start in each environment's frame.

    Attributes:
        shape: One of SHAPES: "box" (``size``: full extents), "cylinder" (``radius``, ``height``, axis along the
            body's z), "sphere" (``radius``), "urdf" or "mesh" (``file``, scaled by ``scale``; a mesh's collision
            shape is its convex hull, as PyBullet makes it for a dynamic body).
        mass: [kg]; friction, spinning_friction, rolling_friction: contact coefficients; rgba in [0, 1].
        pos: Centre (3,) [m]; yaw: about the vertical [rad]. ``pos_range`` ((lo), (hi)) / ``yaw_range`` (lo, hi):
            a run draws each environment's own start from its seed instead (app.episode.motion_factory); the
            scene itself places every copy at ``pos`` and ``yaw``.
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

    def checks(self, at: Where, model=None) -> list[Check]:
        """Shape, mass, sizes, friction, colour, file and ranges (``model`` unused)."""
        return [
            (at("shape"), self.shape in SHAPES, f"{self.shape!r} is not one of {list(SHAPES)}"),
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
            (at("file"), self.shape in ("urdf", "mesh") or self.file is None,
             f"shape {self.shape!r} is made from its sizes and reads no file; give shape: mesh or urdf to use "
             f"{self.file!r}"),
            (at("name"), plain_name_problem(self.name) is None, str(plain_name_problem(self.name))),
            (at("pos_range"), self.pos_range is None or all(lo <= hi for lo, hi in zip(*self.pos_range)),
             f"needs [[x_lo, y_lo, z_lo], [x_hi, y_hi, z_hi]] with lo <= hi, got {self.pos_range}"),
            (at("yaw_range"), self.yaw_range is None or self.yaw_range[0] <= self.yaw_range[1],
             f"needs [lo, hi] with lo <= hi [rad], got {self.yaw_range}"),
        ]

    def start_range(self) -> np.ndarray:
        """Where the object may start, ((lo), (hi)) (2, 3) [m]: its pos_range, or its pos twice."""
        return np.asarray(self.pos_range if self.pos_range is not None else (self.pos, self.pos), dtype=float)

    def half_height(self) -> float:
        """Half the object's vertical extent [m] (a sphere's radius)."""
        return {"box": self.size[2] / 2, "cylinder": self.height / 2}.get(self.shape, self.radius)

    def half_extents(self) -> np.ndarray:
        """Half sizes (3,) [m] along the body's axes (boxes, cylinders, spheres); files: a 5 cm guess."""
        if self.shape == "box":
            return np.asarray(self.size, dtype=float) / 2
        if self.shape == "cylinder":
            return np.array([self.radius, self.radius, self.height / 2])
        if self.shape == "sphere":
            return np.full(3, self.radius)
        return np.full(3, 0.025 * self.scale)

    def yaw_symmetry(self) -> int:
        """The turns about its own z axis that leave the object as it looks: 4 (a box with a square footprint,
        quarter turns), 2 (an oblong box), 0 (a cylinder or sphere: any turn), 1 (a file's shape: none assumed)."""
        if self.shape == "box":
            return 4 if abs(self.size[0] - self.size[1]) < 1e-9 else 2
        return 0 if self.shape in ("cylinder", "sphere") else 1

    def start_quat(self) -> tuple[float, float, float, float]:
        """The start orientation (w, x, y, z): ``yaw`` about the vertical."""
        return (float(np.cos(self.yaw / 2)), 0.0, 0.0, float(np.sin(self.yaw / 2)))


def depth_into_top(table: BoxSpec, lo, hi, half_height: float) -> float:
    """How far [m] below ``table``'s top the bottom of an upright object of ``half_height`` may reach, centred
    anywhere in the box ``lo``..``hi`` (3,) over the table's footprint (any start the range allows there, not only
    its low corner's); -inf where no such start is over the footprint."""
    over = all(min(lo[a], hi[a]) <= table.pos[a] + table.size[a] / 2 and max(lo[a], hi[a]) >= table.pos[a] -
               table.size[a] / 2 for a in (0, 1))
    return table.top() - (min(lo[2], hi[2]) - half_height) if over else -np.inf


def starts_above(obj: ObjectSpec, table: BoxSpec, where: str) -> Check:
    """A primitive object whose start may overlap the table top (its footprint over the table) is an error."""
    lo, hi = obj.start_range()
    bottom = min(lo[2], hi[2]) - obj.half_height()
    return (where, obj.shape not in ("box", "cylinder", "sphere") or depth_into_top(table, lo, hi,
                                                                                    obj.half_height()) <= 1e-3,
            f"object {obj.name!r} would start inside the table: its bottom at z = {bottom:.4f} m, the table top "
            f"at z = {table.top():.4f} m; raise its z to at least {table.top() + obj.half_height():.4f} m")


def _footprint(obj: ObjectSpec) -> np.ndarray:
    """Half extents (3,) [m] of the world-axis box around ``obj`` at its start yaw."""
    h = obj.half_extents()
    c, s = abs(np.cos(obj.yaw)), abs(np.sin(obj.yaw))
    return np.array([c * h[0] + s * h[1], s * h[0] + c * h[1], h[2]])


def starts_apart(obj: ObjectSpec, earlier: list[ObjectSpec], where: str) -> Check:
    """An object with a fixed start (no pos_range) may not start inside another fixed one: PyBullet would push
    the two apart at the first step, throwing them across the scene. Boxes around each at its yaw, 1 mm slack."""
    fixed = [o for o in earlier if o.pos_range is None and o.shape in ("box", "cylinder", "sphere")]
    if obj.pos_range is not None or obj.shape not in ("box", "cylinder", "sphere"):
        return (where, True, "")
    hit = next((o for o in fixed if np.all(np.abs(np.subtract(obj.pos, o.pos)) < _footprint(obj) + _footprint(o)
                                           - 1e-3)), None)
    return (where, hit is None, f"object {obj.name!r} at {list(obj.pos)} would start inside object "
                                f"{getattr(hit, 'name', '')!r} at {list(getattr(hit, 'pos', ()))}: move one apart")
