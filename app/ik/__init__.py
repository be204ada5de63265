"""Inverse kinematics: pose IK (damped least squares), closed form, differential IK, QP."""

from app.ik.solver import IKOptions, IKResult, solve_ik
from app.ik.targets import PoseTargets

__all__ = ["IKOptions", "IKResult", "PoseTargets", "solve_ik"]
