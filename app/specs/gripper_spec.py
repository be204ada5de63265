"""The fingers of a gripper. Defaults: the WidowX AI's two carriages, closing along the end effector's y axis."""

from __future__ import annotations

from dataclasses import dataclass

from app.validation import Check, Where

AXIS_NAMES = ("x", "y", "z", "+x", "+y", "+z", "-x", "-y", "-z")


@dataclass(frozen=True)
class GripperSpec:
    """Which joints are fingers, where open and closed are, how hard they squeeze.

    Attributes:
        joints: The finger joints (prismatic or revolute), commanded by the gripper alone.
        open, closed: Joint values [m or rad] when open / closed, one per joint (or one for all); None: the upper /
            lower limit.
        force: Motor force cap of each finger [N] (or [N m]): never above the URDF effort.
        friction: Lateral friction coefficient of the finger links' contacts.
        approach_axis: The end-effector axis that points at the object in a grasp ("x", "-z", ...).
        closing_axis: The end-effector axis along which the fingers close.
        mimic: Two fingers tied by a JOINT_GEAR constraint (as a URDF ``<mimic>``): they move as one and keep the
            object centred (two force-capped motors alone let it drift towards one finger).
        arm: In ``robot.grippers`` of a description with several arms: the arm (``robot.arms``) it is on.
        ee_link: The end-effector link whose axes these are, where the open gap is measured (rays along
            ``closing_axis``); None: the robot's ``ee_link`` (or its arm's) where a scene file builds it.
    """

    joints: tuple[str, ...] = ("left_carriage_joint", "right_carriage_joint")
    open: tuple[float, ...] | None = None
    closed: tuple[float, ...] | None = None
    force: float = 5.0
    friction: float = 1.0
    approach_axis: str = "x"
    closing_axis: str = "y"
    mimic: bool = True
    arm: str | None = None
    ee_link: str | None = None

    def checks(self, at: Where, model=None, joint_prefix: str = "", ee_link: str | None = None) -> list[Check]:
        """The axes and friction; with the robot's ``model`` (a KinematicModel; its joints and links named
        ``joint_prefix`` + name: a rig's robot's) the joints (fingers, none of which moves the end effector: this
        gripper's ``ee_link``, else ``ee_link``), the force (never above the URDF effort) and open/closed (within
        the joints' limits)."""
        rows = [
            (at("friction"), self.friction >= 0, f"must be >= 0, got {self.friction}"),
            (at("approach_axis"), self.approach_axis in AXIS_NAMES,
             f"{self.approach_axis!r} is not one of {list(AXIS_NAMES)}"),
            (at("closing_axis"), self.closing_axis in AXIS_NAMES
             and self.closing_axis.lstrip("+-") != self.approach_axis.lstrip("+-"),
             f"{self.closing_axis!r} must be one of {list(AXIS_NAMES)} and differ from approach_axis "
             f"{self.approach_axis!r}"),
        ]
        if model is None:
            return rows
        ee = self.ee_link or ee_link
        return rows + self._against(at, model, [joint_prefix + j for j in self.joints],
                                    None if ee is None else joint_prefix + ee)

    def _against(self, at: Where, model, joints: list[str], ee: str | None) -> list[Check]:
        dofs = list(model.dof_names)
        bad = [j for j in joints if j not in dofs]
        rows = [(at("joints"), len(joints) >= 1 and not bad and len(set(joints)) == len(joints),
                 f"{joints}: must name distinct movable joints of the robot, one per finger; "
                 f"{'unknown ' + str(bad) + '; ' if bad else ''}valid: {dofs}")]
        rows.append((at("ee_link"), self.ee_link is None or self.ee_link in model.link_names,
                     f"unknown link {self.ee_link!r}; links: {list(model.link_names)}"))
        if bad or not joints:
            return rows
        if ee in model.link_names:
            arm = [j for j in joints if model.link_index(ee) in model.links_moved_by(model.dof_index(j))]
            rows.append((at("joints"), not arm, f"{arm} move the end effector {ee!r}: arm joints, which the arm's "
                                                f"motion commands; a gripper's fingers are joints below it"))
        effort = min(model.effort_max[model.dof_index(j)] for j in joints)
        rows.append((at("force"), 0 < self.force <= effort,
                     f"must be in (0, {effort:g}] N (the URDF effort of {joints}), got {self.force}"))
        for name, values in (("open", self.open), ("closed", self.closed)):
            if values is not None:
                ok = len(values) in (1, len(joints)) and all(
                    model.q_lower[model.dof_index(j)] <= v <= model.q_upper[model.dof_index(j)]
                    for j, v in zip(joints, values * len(joints) if len(values) == 1 else values))
                rows.append((at(name), ok, f"needs one value per joint {joints} (or one for all) within their "
                                           f"limits, got {list(values)}"))
        return rows
