"""Where the simulated arms stand: an IP address names an arm, its last number its place.

The Stationary AI's addresses (Trossen's docs): 192.168.1.2 right leader, .3 left leader, .4 right follower,
.5 left follower. The followers stand at the kit's mount poses (as scenes/widowx_ai_pair.yaml: bases at
x = -0.019982, y = -+0.4575, z = 0.039086 m, turned +-90 deg about z to face each other), the leaders 0.6 m
behind the kit's frame facing +x. Any other address is an arm of its own in a row behind them. Only the
last number counts (127.0.0.2 is the right leader too): nothing is ever connected to.

The arm's URDF and the table come from the scene the default single-arm configs use (scenes/table.yaml).
``APP_TROSSEN_SCENE=FILE`` names a scene YAML of our own instead: its ``robots:`` (or its one ``robot:``) are
the arms, numbered .2, .3, ... in their order, at their base poses, from their URDFs (WidowX AIs: joint_0-5 and
the carriages); its ``table``, ``floor`` and ``obstacles`` are the boxes.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from app.config.loader import read_yaml, resolve_path
from app.errors import InputError
from app.specs import BoxSpec

SCENE_ENV = "APP_TROSSEN_SCENE"
ROOT = Path(__file__).resolve().parents[2]
SCENE_FILE = ROOT / "scenes" / "table.yaml"
TABLE = BoxSpec("table", (1.6, 1.6, 0.04), (-0.25, 0.0, -0.0205), rgba=(0.55, 0.42, 0.3, 1.0))


@dataclass(frozen=True)
class ArmPlace:
    """One simulated arm's name, base pose in the world (position [m], quaternion (w, x, y, z)) and URDF (None:
    :func:`arm_urdf`'s)."""

    name: str
    base_pos: tuple[float, float, float]
    base_quat: tuple[float, float, float, float]
    urdf: str | None = None


@dataclass(frozen=True)
class Layout:
    """The arms by the last number of their IP address, and the static boxes of the world."""

    places: dict = field(default_factory=dict)
    boxes: tuple = ()


def _yaw(angle: float) -> tuple[float, float, float, float]:
    return (math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2))


KIT = {
    2: ArmPlace("leader_right", (-0.6, -0.4575, 0.0), _yaw(0.0)),
    3: ArmPlace("leader_left", (-0.6, 0.4575, 0.0), _yaw(0.0)),
    4: ArmPlace("follower_right", (-0.019982, -0.4575, 0.039086), _yaw(math.pi / 2)),
    5: ArmPlace("follower_left", (-0.019982, 0.4575, 0.039086), _yaw(-math.pi / 2)),
}


def place_of(ip: str, layout: Layout | None = None) -> ArmPlace:
    """The arm an IPv4 address names in ``layout`` (None: the Stationary AI's, see the module docstring).
    Raises InputError for a malformed address, with the driver's own words ("Invalid IP address: got ...")."""
    parts = str(ip).split(".")
    if len(parts) != 4 or not all(p.isdigit() and 0 <= int(p) <= 255 for p in parts):
        raise InputError(f"Invalid IP address: got {ip}")
    last = int(parts[3])
    places = KIT if layout is None else layout.places
    if last in places:
        return places[last]
    return ArmPlace(f"arm_{last}", (-1.2, 0.6 * ((last % 5) - 2), 0.0), _yaw(0.0))


def layout_from_env(environ=os.environ) -> Layout:
    """The layout APP_TROSSEN_SCENE names, else the Stationary AI's on a table."""
    path = environ.get(SCENE_ENV)
    return scene_layout(Path(path)) if path else Layout(dict(KIT), (TABLE,))


def scene_layout(path: Path) -> Layout:
    """Arms and boxes of one of our scene YAMLs (see the module docstring); InputError naming what is wrong."""
    if not path.is_file():
        raise InputError(f"{SCENE_ENV}: no scene file {path}")
    data = read_yaml(path)
    robots = data.get("robots") or ([dict(data["robot"], name="arm")] if data.get("robot") else [])
    if not robots:
        raise InputError(f"{path}: a scene for app.trossen_arm needs a robot: or robots: section")
    places = {}
    for number, r in enumerate(robots, start=2):
        places[number] = ArmPlace(str(r.get("name", f"arm_{number}")), tuple(r.get("base_pos", (0.0, 0.0, 0.0))),
                                  tuple(r.get("base_quat", (1.0, 0.0, 0.0, 0.0))),
                                  str(resolve_path(r["urdf"], path.parent)))
    keys = ("name", "size", "pos", "quat", "rgba", "collision")
    boxes = [b for b in (data.get("floor"), data.get("table"), *(data.get("obstacles") or [])) if b]
    try:
        specs = tuple(BoxSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in b.items() if k in keys})
                      for b in boxes)
    except TypeError as exc:
        raise InputError(f"{path}: a box of the scene: {exc}") from None
    return Layout(places, specs)


def arm_urdf() -> str:
    """The WidowX AI's URDF, as scenes/table.yaml names it."""
    robot = read_yaml(SCENE_FILE)["robot"]
    return str(resolve_path(robot["urdf"], SCENE_FILE.parent))
