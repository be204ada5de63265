"""Branch continuity of pose IK along Cartesian paths through the WidowX AI's hard places (#56's second goal).

Five paths of 1,000 waypoints each:
- three traced by the arm itself, each joint sweeping smoothly while one passes a singular place: the wrist
  (joint_4 to its limit at -pi/2, where joints 3 and 5 line up), the wrist centre across the base axis (joint_1
  through 0.52 rad) and the elbow stretched (joint_2 to 0); a continuous solution exists all along (the tracing one);
- a top-down circle of 0.08 m radius about (0.3, 0, 0.1);
- a top-down line out to 0.75 m, beyond reach.
Each waypoint is solved from the previous answer (``PoseIK.solve_pose(pos, quat, init_qpos=previous)``: the branch
nearest it, polished), and, beside it, each on its own from the mid configuration. A *jump* is a step above 0.2 rad
in any arm joint between two waypoints. A jump of the path-following solve is counted as avoidable when some closed-form
branch at that waypoint lies within 0.2 rad of the previous answer; else it is an event that leaves the branch, given
with its cause (app.ik.branch_watch.leave_cause): unreachable (no branch reaches), wrist_singularity or
arm_singularity (the arm Jacobian's smallest singular value below 0.01), joint_limit (the previous answer within
0.05 rad of a limit) or other. scripts/bench_ik_continuity_callers.py runs the traced paths through each caller.

    python scripts/bench_ik_continuity.py
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from app import RobotModel
from app.ik.analytic import analytic_ik
from app.ik.branch_watch import JUMP, leave_cause
from app.ik.prepared import PoseIK

log = logging.getLogger("bench_ik_continuity")
URDF = str(Path(__file__).resolve().parents[1] / "assets" / "urdf" / "widowx_ai.urdf")
LINK, N = "ee_gripper_link", 1000
DOWN = np.array([0.7071068, 0.0, 0.7071068, 0.0])


def traced(model: RobotModel, joint: int, values: np.ndarray) -> np.ndarray:
    """A joint path (N, n_dofs): ``joint`` follows ``values``, the other arm joints sway about the mid configuration."""
    s = np.linspace(0.0, 1.0, N)
    q = np.tile(model.mid_config(), (N, 1))
    for j, (amp, freq) in enumerate(((0.4, 1.0), (0.2, 1.5), (0.3, 1.0), (0.3, 2.0), (0.2, 1.0), (0.5, 1.0))):
        q[:, j] += amp * np.sin(2 * np.pi * freq * s + j)
    q[:, joint] = values
    return np.clip(q, model.q_lower, model.q_upper)


def paths(model: RobotModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (pos (N, 3), quat (N, 4))."""
    s = np.linspace(0.0, 1.0, N)
    out = {}
    for name, joint, values in (("wrist to its singular limit", 4, -1.2 - 0.3708 * np.sin(np.pi * s)),
                                ("wrist centre across the base axis", 1, 0.52 + 0.4 * np.cos(np.pi * s)),
                                ("elbow stretched", 2, 0.6 * np.abs(np.cos(np.pi * s)))):
        pos, quat = model.forward_kinematics(traced(model, joint, values), [LINK])
        out[name] = (pos[:, 0], quat[:, 0])
    a = 2 * np.pi * s
    out["top-down circle"] = (np.c_[0.3 + 0.08 * np.cos(a), 0.08 * np.sin(a), np.full(N, 0.1)], np.tile(DOWN, (N, 1)))
    out["line beyond reach"] = (np.c_[0.3 + 0.45 * s, np.zeros(N), np.full(N, 0.1)], np.tile(DOWN, (N, 1)))
    return out


def cause(model, q_prev, valid) -> str:
    """The leave's cause (app.ik.branch_watch), unreachable where no branch reaches the waypoint."""
    return "unreachable" if not valid.any() else leave_cause(model, LINK, q_prev, np.arange(6))


def follow(model, solver, pos, quat) -> tuple[int, list]:
    """Path-following solve: (avoidable jumps, events [(waypoint, cause)])."""
    rest = model.mid_config()
    q_all, valid = analytic_ik(model, LINK, pos, quat, q_rest=rest)
    q_prev, _ = solver.solve_pose(pos[0], quat[0])
    avoidable, events = 0, []
    for i in range(1, len(pos)):
        q, ok = solver.solve_pose(pos[i], quat[i], q_prev)
        step = np.abs(q - q_prev)[:6].max()
        if not ok or step > JUMP:
            near = valid[i] & (np.abs(q_all[i] - q_prev[:6]).max(axis=1) <= JUMP)
            if ok and near.any():
                avoidable += 1
            else:
                events.append((i, "unreachable" if not ok else cause(model, q_prev, valid[i])))
        q_prev = q if ok else q_prev
    return avoidable, events


def independent_jumps(model, solver, pos, quat) -> int:
    qs = np.array([solver.solve_pose(p, r)[0] for p, r in zip(pos, quat)])
    return int((np.abs(np.diff(qs[:, :6], axis=0)).max(axis=1) > JUMP).sum())


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model = RobotModel.from_urdf(URDF)
    solver = PoseIK(model, LINK)
    for name, (pos, quat) in paths(model).items():
        avoidable, events = follow(model, solver, pos, quat)
        by_cause: dict[str, int] = {}
        for _, c in events:
            by_cause[c] = by_cause.get(c, 0) + 1
        first = f"; first at waypoint {events[0][0]} ({events[0][1]})" if events else ""
        log.info("%-34s following: %d avoidable jumps, %d waypoints leaving the branch %s%s | each on its own: "
                 "%d jumps", name, avoidable, len(events), by_cause or "", first,
                 independent_jumps(model, solver, pos, quat))


if __name__ == "__main__":
    main()
