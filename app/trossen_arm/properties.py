"""The driver's property structs (JointLimit, Link, Joint, EndEffector, ...), fields as the real package's.

Each field is a descriptor that converts what it is given (a float, or one of app.trossen_arm.containers'
arrays from any sequence), so ``ee.t_flange_tool[0] = 0.0`` and ``limit.position_max = 3`` work as on the
real driver; every struct starts zeroed, as the real constructors do. Units are the real driver's: SI
(m, rad, kg, N, N m).
"""

from __future__ import annotations

import copy

from app.trossen_arm.containers import ArrayDouble3, ArrayDouble6, ArrayDouble9
from app.trossen_arm.enums import ErrorState, Model

_SCALARS = (float, int, str, bool)


class Field:
    """A typed attribute: ``kind`` converts a value set (float, an array class, a struct class)."""

    def __init__(self, kind: type, doc: str = "", default: object = None):
        self.kind, self.__doc__, self.default = kind, doc, default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        values = obj.__dict__
        if self.name not in values:
            values[self.name] = self.kind() if self.default is None else self.default
        return values[self.name]

    def __set__(self, obj, value) -> None:
        if self.kind in _SCALARS or not isinstance(value, self.kind):
            value = self.kind(value)
        obj.__dict__[self.name] = value


class Struct:
    """Base of the structs: a deep copy per ``copy.copy`` (the real getters return copies)."""

    def __copy__(self):
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        fields = [k for k, v in vars(type(self)).items() if isinstance(v, Field)]
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in fields)})"


class JointLimit(Struct):
    """Joint limits: positions [rad | m], velocities [rad/s | m/s], efforts [N m | N], each with a tolerance."""

    def __init__(self) -> None:
        pass

    position_min = Field(float, "Minimum position in rad for arm joints and m for gripper")
    position_max = Field(float, "Maximum position in rad for arm joints and m for gripper")
    position_tolerance = Field(float, "Tolerance on output position in rad for arm joints and m for gripper")
    velocity_max = Field(float, "Maximum velocity in rad/s for arm joints and m/s for gripper")
    velocity_tolerance = Field(float, "Tolerance on output velocity in rad/s for arm joints and m/s for gripper")
    effort_max = Field(float, "Maximum effort in Nm for arm joints and N for gripper")
    effort_tolerance = Field(float, "Tolerance on output effort in Nm for arm joints and N for gripper")


class Link(Struct):
    """Link inertial properties: mass [kg], inertia [kg m^2] (3x3 row major), inertia frame xyz [m] / rpy [rad]."""

    def __init__(self) -> None:
        pass

    mass = Field(float, "Mass in kg")
    inertia = Field(ArrayDouble9, "Inertia in kg m^2")
    origin_xyz = Field(ArrayDouble3, "Inertia frame translation measured in link frame in m")
    origin_rpy = Field(ArrayDouble3, "Inertia frame RPY angles measured in link frame in rad")


class Joint(Struct):
    """Joint kinematic properties: unit twist (angular, linear) in the joint frame, origin xyz [m] / rpy [rad]."""

    def __init__(self) -> None:
        pass

    axis = Field(ArrayDouble6, "Unit twist of the joint expressed in the joint frame")
    origin_xyz = Field(ArrayDouble3, "Translation from the parent link frame to the joint frame in m")
    origin_rpy = Field(ArrayDouble3, "RPY angles from the parent link frame to the joint frame in rad")


class EndEffector(Struct):
    """End effector properties: palm and finger links, finger offsets [m], pitch circle radius [m], and the tool
    frame in the flange frame (translation [m] then angle-axis [rad])."""

    def __init__(self) -> None:
        pass

    palm = Field(Link, "Properties of the palm link")
    finger_left = Field(Link, "Properties of the left finger link")
    finger_right = Field(Link, "Properties of the right finger link")
    offset_finger_left = Field(float, "Offset from the palm center to the left carriage center in m")
    offset_finger_right = Field(float, "Offset from the palm center to the right carriage center in m")
    pitch_circle_radius = Field(float, "Pitch circle radius in m")
    t_flange_tool = Field(ArrayDouble6, "The tool frame pose measured in the flange frame")


class AlgorithmParameter(Struct):
    """Algorithm parameter: the singularity threshold (smallest singular value allowed)."""

    def __init__(self) -> None:
        pass

    singularity_threshold = Field(float, "Threshold for singularity detection")


class JointCharacteristic(Struct):
    """Joint characteristic: effort correction, friction terms, position offset (kept, not simulated)."""

    def __init__(self) -> None:
        pass

    effort_correction = Field(float, "Effort correction in motor effort unit / Nm or N")
    friction_transition_velocity = Field(float, "Friction transition velocity in rad/s or m/s")
    friction_constant_term = Field(float, "Friction constant term in Nm or N")
    friction_coulomb_coef = Field(float, "Friction coulomb coef in Nm/Nm or N/N")
    friction_viscous_coef = Field(float, "Friction viscous coef in Nm/(rad/s) or N/(m/s)")
    position_offset = Field(float, "Position offset in rad for arm joints or m for the gripper joint")


class PIDParameter(Struct):
    """PID parameters (kept, not simulated: the simulated motors have their own gains)."""

    def __init__(self) -> None:
        pass

    kp = Field(float, "Proportional gain")
    ki = Field(float, "Integral gain")
    kd = Field(float, "Derivative gain")
    imax = Field(float, "Maximum integral value")


class MotorParameter(Struct):
    """Motor parameters: the position and velocity loops' PID parameters."""

    def __init__(self) -> None:
        pass

    position = Field(PIDParameter, "Position loop PID parameters")
    velocity = Field(PIDParameter, "Velocity loop PID parameters")


class DiscoverResult(Struct):
    """Information about a discovered arm controller (here: a simulated arm)."""

    error_state = Field(ErrorState, "Error state of the arm controller", ErrorState.none)
    firmware_version = Field(str, "Firmware version reported by the arm controller")
    ip = Field(str, "IP address of the arm controller")
    model = Field(Model, "Model of the arm controller", Model.wxai_v0)
