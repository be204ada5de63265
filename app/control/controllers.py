"""The controllers, each paired with its config (ManiSkill's pattern): ``controller.type`` in a run
config selects one, and only that config's keys are valid.

``QPController`` (app.control.qp_controller): constrained differential IK with joint limits and
collision margins. ``PoseIKController`` (app.control.ik_controller): one batched pose-IK call per tick.
Both talk to a :class:`~app.control.robot.ControlledRobot`.
"""

from app.control.ik_controller import PoseIKController, PoseIKControllerConfig
from app.control.qp_controller import QPController, QPControllerConfig

CONTROLLER_TYPES = {"ik": PoseIKControllerConfig, "qp": QPControllerConfig}

__all__ = ["CONTROLLER_TYPES", "PoseIKController", "PoseIKControllerConfig", "QPController", "QPControllerConfig"]
