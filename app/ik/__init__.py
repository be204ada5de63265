"""Inverse kinematics: app.RobotModel's pose IK (one prepared-solver pipeline), closed form, differential
IK, and the QP's tasks, limits, builder and solvers."""

from app.ik.prepared import IKProblem, PoseIK
from app.ik.solver import IKOptions, IKResult
from app.ik.targets import PoseTargets

__all__ = ["IKOptions", "IKProblem", "IKResult", "PoseIK", "PoseTargets"]
