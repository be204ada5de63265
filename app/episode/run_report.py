"""A run's report: per environment (final joints, link poses, targets, errors, flags, margins, objects, a pick's
result, the gripper), the summary the console prints and ``--check`` reads, the task's masks, the invariants."""

from __future__ import annotations

import numpy as np

from app.config.schema import RunConfig
from app.control.controllers import CONTROLLER_TYPES
from app.control.status import REACHED_POS, REACHED_ROT, reached
from app.kinematics.rotations import quat_normalize, quat_to_matrix
from app.quality.motion_report import summary_line
from app.render.report import finite_or_none


def task_links(run: RunConfig) -> list[str]:
    """The links the task moves, in target order: its own (fingertips), its arms', or the scene's end effector."""
    return [link for _, link in run.motion.moved_links(run.scene_config.robot)]


def target_labels(run: RunConfig) -> tuple[str, ...]:
    """Each target's name in target order: the arm whose end effector it moves, else '' (one unnamed robot)."""
    arm_of = {link: arm for arm, link in (run.scene_config.robot.arms or {}).items()}
    labels = tuple(arm_of.get(link, "") for link in task_links(run))
    return labels if any(labels) else ()


def arm_report(run: RunConfig, result, e: int) -> dict:
    """Environment e's arms, each by name: its end-effector link and final position error [m] (over the task's
    pos_mask axes of the base frame), for a robot with named arms whose end effectors the task moves."""
    arms, links = run.scene_config.robot.arms or {}, task_links(run)
    R = quat_to_matrix(quat_normalize(np.asarray(run.scene_config.robot.base_quat, dtype=float)))
    mask = np.asarray(run.motion.pos_mask, dtype=float)
    out = {}
    for arm, link in arms.items():
        if link in links:
            k = links.index(link)
            err = ((result.ee_pos[e, k] - result.targets_pos[e, k]) @ R) * mask
            out[arm] = {"link": link, "pos_err_final_m": float(np.linalg.norm(err))}
            tel = result.telemetry
            if "pos_err_links" in tel and len(tel["t"]):
                late = tel["t"] >= min(1.0, tel["t"][-1])
                out[arm]["pos_err_max_after_1s_m"] = max(float(tel["pos_err_links"][late, e, k].max()),
                                                         out[arm]["pos_err_final_m"])  # the final state counts too
    return out


def invariant_summary(run: RunConfig, result) -> dict:
    """The worst value over every environment and physics step of each promise the simulated arms keep."""
    inv, tel = result.invariants, result.telemetry
    d_safe = run.controller.d_safe
    return {"joint_limit_excess_max_rad": float(inv["limit_excess"].max()),
            "joint_limit_promise_rad": 1e-6,
            "joint_stop_hits": int(inv["stop_hits"].sum()),
            "velocity_over_bound_max": float(inv["velocity_ratio"].max()),
            "velocity_promise": None if run.controller.mode == "kinematic" else 1.02,
            "min_obstacle_distance_m": finite_or_none(np.min(tel["min_distance"])) if len(tel["t"]) else None,
            "obstacle_promise_m": None if d_safe is None else d_safe - 1e-4}


def gripper_report(tel: dict, e: int, controller, physics_hz: float) -> dict:
    """Environment e's gripper over the run: final opening [m], holding at the end, and for how long it held [s]."""
    opening, holding = tel["gripper_opening_m"][:, e], tel["gripper_holding"][:, e]
    tick = 1.0 / (controller.control_hz or physics_hz)
    return {"opening_final_m": float(opening[-1]) if len(opening) else None,
            "holding_final": bool(holding[-1]) if len(holding) else False, "held_s": float(holding.sum() * tick)}


def pick_summary(episodes: list[dict]) -> dict:
    """An object task's outcome over every environment: placed n/N, the failures by the task's reason and by the
    expert's own (its cause), the worst slip."""
    reasons: dict[str, list[int]] = {}
    causes: dict[str, list[int]] = {}
    for e, ep in enumerate(episodes):
        if not ep["success"]:
            reasons.setdefault(ep["reason"], []).append(e)
        if ep.get("expert_reason"):
            causes.setdefault(ep["expert_reason"], []).append(e)
    slips = [ep["slip_max_m"] for ep in episodes]
    return {"placed": sum(ep["success"] for ep in episodes), "failed": reasons, "expert_failed": causes,
            "slip_max_m": max(slips) if slips else None}


def plan_summary(plans: list[dict]) -> dict:
    """A plan task's outcome over every environment: planned n/N, the failures' reasons, planning times [s]."""
    failed: dict[str, list[int]] = {}
    for e, p in enumerate(plans):
        if not p["success"]:
            failed.setdefault(p["reason"], []).append(e)
    times = [m["planning_s"] for p in plans for m in p["moves"]]
    return {"planned": sum(p["success"] for p in plans), "plan_failed": failed,
            "planning_median_s": float(np.median(times)) if times else None}


def run_summary(run: RunConfig, envs: list[dict], episodes: list[dict] | None = None,
                plans: list[dict] | None = None) -> dict:
    """How the run went, over every environment: the figures the console prints and ``--check`` reads."""
    def worst(key, pick=max):
        values = [e[key] for e in envs if e[key] is not None]
        return pick(values) if values else None

    d_safe = run.controller.d_safe
    return {"reached": sum(e["reached_final"] for e in envs), "n_envs": len(envs),
            "missed_envs": [e["env"] for e in envs if not e["reached_final"]],
            "pos_err_final_max_m": worst("pos_err_final_m"), "rot_err_final_max_rad": worst("rot_err_final_rad"),
            "stalled_final": sum(e["stalled_final"] for e in envs), "stalled_ever": sum(e["stalled_ever"] for e in envs),
            "solver_failed_final": sum(not e["solver_ok_final"] for e in envs),
            "solver_failed_ticks_fraction": 1.0 - float(np.mean([e["solver_ok_fraction"] for e in envs])),
            "solver_failed_ticks": sum(e["solver_failed_ticks"] for e in envs),  # env-ticks, as the warnings count
            "min_obstacle_distance_m": worst("min_obstacle_distance_m", min), "d_safe_m": d_safe,
            "joint_limit_margin_min_rad": worst("joint_limit_margin_min", min),
            **(pick_summary(episodes) if episodes else {}), **(plan_summary(plans) if plans else {}),
            **({"motion": summary_line([e["motion"] for e in envs])} if envs and "motion" in envs[0] else {})}


def task_description(run: RunConfig) -> dict:
    """The task's masks and the tolerances used: the errors in the report are those of the masked task (the
    position along the masked axes of the base frame, the rotation the rot_mask constrains), as the IK sees it."""
    task, c = run.motion, run.controller
    return {"type": task.type, "links": task_links(run), "pos_mask": list(task.pos_mask),
            "rot_mask": list(task.rot_mask),
            "errors": "masked: position over the pos_mask axes [m]; rotation of the rot_mask axes [rad] (one True: "
                      "the angle between that link axis and the target's; all three: the full rotation)",
            "controller_tolerance": c.tolerances()}


def report_dict(run: RunConfig, result, model) -> dict:
    """Per environment: final joints, link poses, targets, errors, flags, margins; a summary, the task's masks
    and tolerances, the invariants kept, and timings. ``result``: the run's app.episode.loop.RunResult."""
    tel = result.telemetry
    margin = np.minimum(result.q_final - model.q_lower, model.q_upper - result.q_final).min(axis=1)
    envs = []
    for e in range(len(result.q_final)):
        envs.append({
            "env": e,
            "q_final": result.q_final[e],
            "links_pos": result.ee_pos[e], "links_quat_wxyz": result.ee_quat[e],
            "target_pos": result.targets_pos[e], "target_quat_wxyz": result.targets_quat[e],
            "pos_err_final_m": float(tel["pos_err"][-1, e]), "rot_err_final_rad": float(tel["rot_err"][-1, e]),
            "pos_err_max_after_1s_m": float(np.max(tel["pos_err"][tel["t"] >= min(1.0, tel["t"][-1]), e])),
            "solver_ok_fraction": float(np.mean(tel["solver_ok"][:, e])), "solver_ok_final": bool(tel["solver_ok"][-1, e]),
            "solver_failed_ticks": int(np.count_nonzero(~np.asarray(tel["solver_ok"][:, e], bool))),
            "reached_final": bool(reached(tel["pos_err"][-1, e], tel["rot_err"][-1, e])),
            "joint_limit_margin_min": float(margin[e]),
            "stalled_final": bool(tel["stalled"][-1, e]), "stalled_ever": bool(tel["stalled"][:, e].any()),
            "min_obstacle_distance_m": finite_or_none(np.min(tel["min_distance"][:, e])),
            "joint_limit_excess_max_rad": float(result.invariants["limit_excess"][e]),
            "velocity_over_bound_max": float(result.invariants["velocity_ratio"][e]),
            "joint_stop_hits": int(result.invariants["stop_hits"][e]),
            **({"objects": {name: {k: v[e] for k, v in o.items()} for name, o in result.objects.items()}}
               if result.objects else {}),
            **({"episode": result.episodes[e]} if result.episodes else {}),  # an object task's judgement, its expert's
            **({"plan": result.plans[e]} if result.plans else {}),
            **({"gripper": gripper_report(tel, e, run.controller, run.scene_config.physics_hz)}
               if "gripper_opening_m" in tel else {}),
            **({"arms": arm_report(run, result, e)} if run.scene_config.robot.arms else {}),
            **({"motion": result.motion[e]} if result.motion else {}),
        })
    controller = next(k for k, v in CONTROLLER_TYPES.items() if isinstance(run.controller, v))
    summary = run_summary(run, envs, result.episodes, result.plans)
    if result.simulated_s is not None and result.simulated_s < run.duration - 0.5 / run.scene_config.physics_hz:
        summary |= {"stopped_early": True, "simulated_s": round(result.simulated_s, 4), "duration_s": run.duration}
    return {"config": run.name, "controller": controller, "task": run.motion.type,
            "n_envs": len(envs), "duration_s": run.duration, "seed": run.seed,
            "simulated_s": None if result.simulated_s is None else round(result.simulated_s, 4),
            "summary": summary, "task_masks": task_description(run),
            "reached_tolerance": {"pos_m": REACHED_POS, "rot_rad": REACHED_ROT},
            "invariants": invariant_summary(run, result),
            "timings_s": {k: round(v, 4) for k, v in result.timings.items()},
            **({"scale": result.scale} if result.scale else {}), "environments": envs}
