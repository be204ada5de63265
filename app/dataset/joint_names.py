"""Joint names of the Trossen AI kits' datasets: 7 values per arm (six joints, then the gripper).

Two namings of one layout (NAMINGS). ``kits``: one arm (``trossen_ai_solo``) is ``main_joint_0..6``; two arms
(``trossen_ai_stationary``) are ``left_joint_0..6`` then ``right_joint_0..6`` (Trossen's recording fork and
its kit datasets). ``plugin``: as the current Trossen LeRobot plugin (``lerobot_robot_trossen``) names its
WidowX AI follower's features, ``joint_0.pos .. joint_5.pos`` then ``left_carriage_joint.pos`` (the gripper:
the carriage it commands), each prefixed ``left_`` / ``right_`` on two arms. Index 6 of each arm is the
gripper's opening; either naming is read back (:func:`arms_of`).
"""

from __future__ import annotations

from app.errors import DatasetError

JOINTS_PER_ARM = 7
GRIPPER_SLOT = 6  # the last value of each arm: the gripper's opening
ONE_ARM = ("main",)
TWO_ARMS = ("left", "right")
ROBOT_TYPES = {1: "trossen_ai_solo", 2: "trossen_ai_stationary"}
NAMINGS = ("kits", "plugin")
PLUGIN_JOINTS = tuple(f"joint_{i}.pos" for i in range(GRIPPER_SLOT)) + ("left_carriage_joint.pos",)


def trossen_names(n_arms: int) -> list[str]:
    """The kit's names for ``n_arms`` arms (1 or 2): ``main_joint_0..6`` or ``left_joint_0..6, right_joint_0..6``."""
    if n_arms not in (1, 2):
        raise DatasetError(f"a Trossen AI dataset has 1 or 2 arms, got {n_arms}")
    arms = ONE_ARM if n_arms == 1 else TWO_ARMS
    return [f"{arm}_joint_{i}" for arm in arms for i in range(JOINTS_PER_ARM)]


def plugin_names(n_arms: int) -> list[str]:
    """The Trossen LeRobot plugin's names for ``n_arms`` arms (1 or 2): ``joint_0.pos .. left_carriage_joint.pos``,
    or the same prefixed ``left_`` then ``right_``."""
    if n_arms not in (1, 2):
        raise DatasetError(f"a Trossen AI dataset has 1 or 2 arms, got {n_arms}")
    prefixes = ("",) if n_arms == 1 else ("left_", "right_")
    return [f"{p}{name}" for p in prefixes for name in PLUGIN_JOINTS]


def layout_names(n_arms: int, naming: str = "kits") -> list[str]:
    """The names of ``n_arms`` arms' values in ``naming`` (one of NAMINGS)."""
    if naming not in NAMINGS:
        raise DatasetError(f"joint naming must be one of {list(NAMINGS)}, got {naming!r}")
    return trossen_names(n_arms) if naming == "kits" else plugin_names(n_arms)


def arms_of(names: list[str]) -> tuple[str, ...]:
    """The arm prefixes of a Trossen-named vector (either naming), in order (``("main",)`` or ``("left",
    "right")``).

    Raises:
        DatasetError: the names are not one of the two kits' layouts (says what was expected).
    """
    for n_arms in (1, 2):
        if list(names) in (trossen_names(n_arms), plugin_names(n_arms)):
            return ONE_ARM if n_arms == 1 else TWO_ARMS
    raise DatasetError(f"joint names {list(names)[:3]}... ({len(names)} values) are not a Trossen AI layout; "
                       f"expected {trossen_names(1)[:2]}... or {plugin_names(1)[:2]}... (7 values), or "
                       f"{trossen_names(2)[:2]}... or {plugin_names(2)[:2]}... (14 values)")


def gripper_columns(n_values: int) -> list[int]:
    """Column indices of the grippers in a vector of ``n_values`` (7 per arm)."""
    if n_values % JOINTS_PER_ARM or not n_values:
        raise DatasetError(f"a Trossen AI vector has 7 values per arm, got {n_values}")
    return [arm * JOINTS_PER_ARM + GRIPPER_SLOT for arm in range(n_values // JOINTS_PER_ARM)]
