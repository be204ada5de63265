"""Where the simulated arms stand: an IP address names an arm, its last number its place.

The Stationary AI's addresses (Trossen's docs): 192.168.1.2 right leader, .3 left leader, .4 right follower,
.5 left follower. The followers stand at the kit's mount poses (as scenes/widowx_ai_pair.yaml: bases at
x = -0.019982, y = -+0.4575, z = 0.039086 m, turned +-90 deg about z to face each other), the leaders 0.6 m
behind the kit's frame facing +x. Any other address is an arm of its own in a row behind them. Only the
last number counts (127.0.0.2 is the right leader too): nothing is ever connected to.

The arm's URDF and the table come from the scene the default single-arm configs use (scenes/table.yaml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from app.config.loader import read_yaml, resolve_path
from app.errors import InputError
from app.specs import BoxSpec

ROOT = Path(__file__).resolve().parents[2]
SCENE_FILE = ROOT / "scenes" / "table.yaml"
TABLE = BoxSpec("table", (1.6, 1.6, 0.04), (-0.25, 0.0, -0.0205), rgba=(0.55, 0.42, 0.3, 1.0))


@dataclass(frozen=True)
class ArmPlace:
    """One simulated arm's name and base pose in the world: position [m], quaternion (w, x, y, z)."""

    name: str
    base_pos: tuple[float, float, float]
    base_quat: tuple[float, float, float, float]


def _yaw(angle: float) -> tuple[float, float, float, float]:
    return (math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2))


KIT = {
    2: ArmPlace("leader_right", (-0.6, -0.4575, 0.0), _yaw(0.0)),
    3: ArmPlace("leader_left", (-0.6, 0.4575, 0.0), _yaw(0.0)),
    4: ArmPlace("follower_right", (-0.019982, -0.4575, 0.039086), _yaw(math.pi / 2)),
    5: ArmPlace("follower_left", (-0.019982, 0.4575, 0.039086), _yaw(-math.pi / 2)),
}


def place_of(ip: str) -> ArmPlace:
    """The arm an IPv4 address names (see the module docstring). Raises InputError for a malformed address,
    with the driver's own words ("Invalid IP address: got ...")."""
    parts = str(ip).split(".")
    if len(parts) != 4 or not all(p.isdigit() and 0 <= int(p) <= 255 for p in parts):
        raise InputError(f"Invalid IP address: got {ip}")
    last = int(parts[3])
    if last in KIT:
        return KIT[last]
    return ArmPlace(f"arm_{last}", (-1.2, 0.6 * ((last % 5) - 2), 0.0), _yaw(0.0))


def arm_urdf() -> str:
    """The WidowX AI's URDF, as scenes/table.yaml names it."""
    robot = read_yaml(SCENE_FILE)["robot"]
    return str(resolve_path(robot["urdf"], SCENE_FILE.parent))
