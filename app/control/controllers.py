"""The controllers, each paired with its config (ManiSkill's pattern): ``controller.type`` in a run
config selects one, and only that config's keys are valid.

``QPController`` (app.control.qp_controller): constrained differential IK with joint limits and
collision margins. ``PoseIKController`` (app.control.ik_controller): one batched pose-IK call per tick.
Both talk to a :class:`~app.control.robot_protocol.ControlledRobot`.
"""

import typing

from app.control.ik_controller import PoseIKController, PoseIKControllerConfig
from app.control.qp_controller import QPController, QPControllerConfig

# ``controller.type`` -> its config class (whose ``controller_cls`` builds the controller, whose ``checks`` lists
# what its values must be): the one place a new controller is registered.
CONTROLLER_TYPES = {"ik": PoseIKControllerConfig, "qp": QPControllerConfig}
ControllerConfig = typing.Union[tuple(CONTROLLER_TYPES.values())]  # noqa: UP007 - built from the registry

__all__ = ["CONTROLLER_TYPES", "ControllerConfig", "PoseIKController", "PoseIKControllerConfig", "QPController",
           "QPControllerConfig"]
