"""The standard variants: StandardEndEffector (palm / finger masses [kg], finger offsets [m], pitch circle
radius [m], tool frame in the flange frame), StandardJoints, StandardLinks, StandardMotorParameters, and the
WidowX AI's default joint limits.

End effector figures are those the real package 1.11.0 reports for each variant (inertias are left zero: the
simulated arm's inertias come from its URDF). The joint, link and motor-parameter sets are structs of the
right count, zeroed: ``set_joints`` / ``set_links`` / ``set_motor_parameters`` accept and keep them but the
simulation's kinematics, inertias and motor gains are the URDF's and app.sim's.
"""

from __future__ import annotations

import copy
from typing import ClassVar

from app.trossen_arm.enums import Mode
from app.trossen_arm.properties import EndEffector, Joint, JointLimit, Link, MotorParameter

# variant -> (palm mass, finger mass, offset_finger_left, offset_finger_right, pitch_circle_radius, t_flange_tool)
_END_EFFECTORS = {
    "no_gripper": (0.0, 0.0, 0.0179, -0.0179, 0.00875, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "no_gripper_20250509": (0.0, 0.0, 0.0179, -0.0179, 0.00875, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "vxai_v0_base": (0.57903811, 0.081271, 0.0227, -0.0227, 0.00875, (-0.021, 0.0, -0.200062, 0.0, 0.0, 0.0)),
    "vxai_v0_base_20250509": (0.57903811, 0.081271, 0.0227, -0.0227, 0.00875, (-0.021, 0.0, -0.200062, 0.0, 0.0, 0.0)),
    "wxai_v0_base": (0.55984146, 0.07283511, 0.02449818, -0.02450182, 0.00875, (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_base_20250509": (0.5378, 0.05945, 0.0227, -0.0227, 0.00875, (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_base_20260626": (0.55984146, 0.07283511, 0.02449818, -0.02450182, 0.00875,
                              (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_follower": (0.67244176, 0.07283511, 0.02449818, -0.02450182, 0.00875,
                         (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_follower_20250509": (0.6423, 0.05945, 0.0227, -0.0227, 0.00875, (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_follower_20260626": (0.67244176, 0.07283511, 0.02449818, -0.02450182, 0.00875,
                                  (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_leader": (0.6541194, 0.06566254, 0.01859818, -0.01860182, 0.00875, (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_leader_20250509": (0.5957, 0.0638, 0.0179, -0.0179, 0.00875, (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
    "wxai_v0_leader_20260626": (0.6541194, 0.06566254, 0.01859818, -0.01860182, 0.00875,
                                (0.156062, 0.0, 0.0, 0.0, 0.0, 0.0)),
}


def _end_effector(palm: float, finger: float, left: float, right: float, radius: float, tool: tuple) -> EndEffector:
    ee = EndEffector()
    ee.palm.mass, ee.finger_left.mass, ee.finger_right.mass = palm, finger, finger
    ee.offset_finger_left, ee.offset_finger_right, ee.pitch_circle_radius = left, right, radius
    ee.t_flange_tool = tool
    return ee


class StandardEndEffector:
    """End effector properties for the standard variants (class attributes; take a copy before editing)."""

    def __init__(self) -> None:
        pass


for _name, _row in _END_EFFECTORS.items():
    setattr(StandardEndEffector, _name, _end_effector(*_row))


class StandardJoints:
    """Joint kinematic properties for standard variants (8 each: six arm joints, two fingers)."""

    wxai_v0_20250509: ClassVar[list] = [Joint() for _ in range(8)]
    wxai_v0_20260626: ClassVar[list] = [Joint() for _ in range(8)]

    def __init__(self) -> None:
        pass


class StandardLinks:
    """Link inertial properties for standard variants (9 each: base, six arm links, palm... as the real)."""

    wxai_v0_20250509: ClassVar[list] = [Link() for _ in range(9)]
    wxai_v0_20260626: ClassVar[list] = [Link() for _ in range(9)]

    def __init__(self) -> None:
        pass


def _motor_set() -> list:
    return [{mode: MotorParameter() for mode in Mode} for _ in range(7)]


class StandardMotorParameters:
    """Motor parameters for standard variants (7 joints, one MotorParameter per mode)."""

    wxai_v0_20250509: ClassVar[list] = _motor_set()
    wxai_v0_20260317: ClassVar[list] = _motor_set()
    wxai_v0_default: ClassVar[list] = wxai_v0_20260317
    wxai_v0_latest: ClassVar[list] = wxai_v0_20260317

    def __init__(self) -> None:
        pass


# the WidowX AI's default joint limits (Trossen's default_configurations_wxai_v0.yaml): per joint
# (position_min, position_max, position_tolerance, velocity_max, velocity_tolerance, effort_max, effort_tolerance)
_WXAI_LIMITS = (
    (-3.1415927, 3.1415927, 0.2, 6.2831853, 0.0, 27.0, 5.4),
    (0.0, 3.1415927, 0.2, 6.2831853, 0.0, 27.0, 5.4),
    (0.0, 2.3561945, 0.2, 6.2831853, 0.0, 27.0, 5.4),
    (-1.5707964, 1.5707964, 0.4, 9.424778, 0.0, 7.0, 1.4),
    (-1.5707964, 1.5707964, 0.4, 9.424778, 0.0, 7.0, 1.4),
    (-3.1415927, 3.1415927, 0.4, 9.424778, 0.0, 7.0, 1.4),
    (0.0, 0.04, 0.004, 0.25, 0.0, 100.0, 300.0),
)


def default_joint_limits() -> list[JointLimit]:
    """The WidowX AI's seven default JointLimits (arm joints, then the gripper), fresh copies."""
    out = []
    for row in _WXAI_LIMITS:
        limit = JointLimit()
        (limit.position_min, limit.position_max, limit.position_tolerance, limit.velocity_max,
         limit.velocity_tolerance, limit.effort_max, limit.effort_tolerance) = row
        out.append(limit)
    return out


def copied(value):
    """A deep copy (what the real getters hand out: the caller's edits change nothing until set back)."""
    return copy.deepcopy(value)
