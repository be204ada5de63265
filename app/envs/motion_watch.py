"""Each environment's episode watched for motion quality (app.quality.trace): the arm joints measured after every
environment step and what they were commanded, judged when the episode ends.

The commanded motion is the policy's own where it commands joints (the ``joint`` mode's goals: a jump between two
actions shows as a step, though the motors are then led there within their bounds), else the controller's motor
targets at the step's end (the end-effector modes). Samples are one environment step apart."""

from __future__ import annotations

import numpy as np


def commanded(world, joint_mode: bool, q_goal: np.ndarray | None) -> np.ndarray | None:
    """What the step commanded (see the module docstring): the joint goals, else the motors' last targets."""
    return q_goal if joint_mode else world.robot.last_command


def episode_info(report: dict) -> dict:
    """The flat info keys of an episode's report: ``motion_verdict``, ``motion_first`` ('source quantity' of the
    first event, '' when smooth), ``motion_event`` (its text), ``motion_branch_changes`` (the command's IK branch
    changes; 0 where the arm has no closed form) and ``motion_<source>_<quantity>_ratio``: the peak over the
    joints of |value| / limit."""
    first = report["first_event"]
    out = {"motion_verdict": report["verdict"], "motion_first": "" if first is None else
           f"{first['source']} {first['quantity']}", "motion_event": "" if first is None else first["text"],
           "motion_branch_changes": len(report["branch_changes"])}
    for key, ratio in report["peak_ratios"].items():
        out[f"motion_{key}_ratio"] = ratio
    return out
