"""The report of what a script did, in app.run's layout (app.episode.run_report): each arm an environment (its final
joints, tool pose, pose goal and errors from it, whether it reached it, its margin to the joint limits, its commands
and events, its motion-quality report: app.quality), the summary of them all, the reached tolerances, the invariants,
and every limit and collision event in time order."""

from __future__ import annotations

import numpy as np

from app.control.status import REACHED_POS, REACHED_ROT, reached
from app.quality.motion_report import summary_line
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.motion_samples import ArmMotion
from app.trossen_arm.recorder import FPS, ArmTrack, Recorder, pose_error, pose_quat

ARM_JOINTS = N_JOINTS - 1  # the gripper's limits are in metres: the margin is the arm joints' [rad]


def arm_report(e: int, name: str, slot, track: ArmTrack, motion: ArmMotion | None = None) -> dict:
    """Arm ``name`` (environment e) at the end: the tool's pose and its errors from the pose goal, where the
    arm has both (a driver gave it a position goal); None where not."""
    c, m = slot.controller, slot.controller.measured
    lo = np.array([lim.position_min for lim in c.limits[:ARM_JOINTS]])
    hi = np.array([lim.position_max for lim in c.limits[:ARM_JOINTS]])
    q = m.q[:ARM_JOINTS]
    out = {"env": e, "arm": name, "ip_last_number": slot.number, "base_pos": list(slot.place.base_pos),
           "q_final": m.q.copy(), "error_state_final": c.error_state.name,
           "links_pos": None, "links_quat_wxyz": None, "target_pos": None, "target_quat_wxyz": None,
           "pos_err_final_m": None, "rot_err_final_rad": None, "reached_final": False,
           "joint_limit_margin_min": float(np.min(np.minimum(q - lo, hi - q))),  # arm joints [rad]
           "joint_limit_excess_max": track.limit_excess_max,
           "commands": {k: {"count": int(v[0]), "first_t": round(v[1], 4)} for k, v in track.commands.items()},
           "events": track.events, "motion": None if motion is None else motion.report(c)}
    if track.tool is not None:
        T = slot.base_T @ track.tool.tool_pose(m.q_dofs)
        out["links_pos"], out["links_quat_wxyz"] = pose_quat(T)
        if track.goal is not None:
            out["target_pos"], out["target_quat_wxyz"] = pose_quat(track.goal)
            pos_err, rot_err = pose_error(T, track.goal)
            out |= {"pos_err_final_m": pos_err, "rot_err_final_rad": rot_err,
                    "reached_final": bool(reached(pos_err, rot_err)) and c.error_state.name == "none"}
    return out


def summary(envs: list[dict]) -> dict:
    """Over every arm: reached n/N, the misses, the worst final errors and joint limit margin, the events."""
    def worst(key, pick=max):
        values = [e[key] for e in envs if e[key] is not None]
        return pick(values) if values else None

    events = [ev for e in envs for ev in e["events"]]
    return {"reached": sum(e["reached_final"] for e in envs), "n_envs": len(envs),
            "missed_envs": [e["env"] for e in envs if not e["reached_final"]],
            "pos_err_final_max_m": worst("pos_err_final_m"), "rot_err_final_max_rad": worst("rot_err_final_rad"),
            "joint_limit_margin_min_rad": worst("joint_limit_margin_min", min),
            "limit_events": sum(ev["kind"] != "collision" for ev in events),
            "collisions": sum(ev["kind"] == "collision" for ev in events),
            "errors_final": sum(e["error_state_final"] != "none" for e in envs),
            "motion": summary_line([e["motion"] for e in envs if e["motion"] is not None])}


def report_dict(recorder: Recorder, world, title: str, video_frames: int | None = None) -> dict:
    """The whole report (see the module docstring) of the world's arms, in the world's arm order; ``video_frames``:
    the video's (its idle opening left out: app.trossen_arm.video.without_idle_start), None: every recorded one."""
    envs = [arm_report(e, name, slot, recorder.track(name), recorder.motions.get(name))
            for e, (name, slot) in enumerate(world.arms.items())]
    events = sorted(({"arm": e["arm"], **ev} for e in envs for ev in e["events"]), key=lambda ev: ev["t"])
    return {"config": title, "controller": "trossen_arm", "task": "driver_script", "n_envs": len(envs),
            "simulated_s": round(world.t, 4), "summary": summary(envs),
            "reached_tolerance": {"pos_m": REACHED_POS, "rot_rad": REACHED_ROT},
            "invariants": {"joint_limit_excess_max": max((e["joint_limit_excess_max"] for e in envs), default=0.0)},
            "video": {"fps": FPS, "frames": len(recorder.times) if video_frames is None else video_frames,
                      "recorded_frames": len(recorder.times)}, "events": events, "environments": envs}
