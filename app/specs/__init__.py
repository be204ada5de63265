"""The scene's things as data, PyBullet-free: static boxes, dynamic objects, grippers, named cameras and the look.

One frozen dataclass each, with its defaults and its value checks beside its fields (``checks(at, model=None)``
rows for app.validation.raise_first). The YAML sections of a scene file are these classes (the loader adds only
where in the file a value came from); ``app.Scene`` accepts them whole and checks them with
:func:`app.validation.check_spec` before anything is created.
"""

from app.specs.box_spec import BoxSpec
from app.specs.camera_stream import CameraStream
from app.specs.gripper_spec import AXIS_NAMES, GripperSpec
from app.specs.look_spec import LookSpec
from app.specs.object_spec import SHAPES, ObjectSpec, starts_above
from app.specs.scene_spec import RobotPlacement, SceneSpec

__all__ = ["AXIS_NAMES", "SHAPES", "BoxSpec", "CameraStream", "GripperSpec", "LookSpec", "ObjectSpec", "RobotPlacement",
           "SceneSpec", "starts_above"]
