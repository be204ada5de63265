"""Branch continuity in each place that turns poses into joints (#56's second goal, per caller).

The three paths of scripts/bench_ik_continuity.py that the WidowX AI traces itself (so a continuous solution exists
all along: the wrist to its singular limit, the wrist centre across the base axis, the elbow stretched), 1,000
waypoints each, through:
- ``genesis``: ``model.inverse_kinematics(link, pos, quat, init_qpos=previous answer)``, the Genesis-named call;
- ``envs``: ``app.envs`` with ``action_mode="ee_pose"`` (configs/pick_place.yaml's controller, one environment,
  one waypoint an action): every control tick's IK answer is recorded, and the episode's ``motion_branch_changes``;
- ``trossen_arm``: the driver's Cartesian IK (app.trossen_arm.cartesian.ToolKinematics.solve, refined, each waypoint
  of the tool frame seeded by the answer before, as its Cartesian goals and paths are solved);
- ``planner``: app.planning's pose goals (``pose_goals``: every branch, nearest the start first) from the previous
  waypoint's goal.
A *jump* is a step above 0.2 rad in an arm joint between consecutive answers (ticks for envs). Prints the jumps per
caller and path; each should be 0.

    python scripts/bench_ik_continuity_callers.py [--paths 3] [--callers genesis envs trossen_arm planner]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np

from app import RobotModel
from app.ik.branch_watch import JUMP

log = logging.getLogger("bench_ik_continuity_callers")
ROOT = Path(__file__).resolve().parents[1]
URDF = str(ROOT / "assets" / "urdf" / "widowx_ai.urdf")
LINK, N = "ee_gripper_link", 1000


def traced_paths(model: RobotModel) -> dict[str, np.ndarray]:
    """name -> the tracing joint path (N, n_dofs) (scripts/bench_ik_continuity.py's three traced paths)."""
    import bench_ik_continuity as paths

    s = np.linspace(0.0, 1.0, N)
    return {name: paths.traced(model, joint, values) for name, joint, values in (
        ("wrist to its singular limit", 4, -1.2 - 0.3708 * np.sin(np.pi * s)),
        ("wrist centre across the base axis", 1, 0.52 + 0.4 * np.cos(np.pi * s)),
        ("elbow stretched", 2, 0.6 * np.abs(np.cos(np.pi * s))))}


def jumps(q: np.ndarray) -> int:
    """Steps above JUMP [rad] in the six arm joints between consecutive rows of q (T, n_dofs)."""
    return int((np.abs(np.diff(q[:, :6], axis=0)).max(axis=1) > JUMP).sum())


def genesis(model: RobotModel, q_path: np.ndarray) -> str:
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q_path, [LINK]))
    q, out = q_path[0], []
    for p, r in zip(pos, quat):
        q = model.inverse_kinematics(LINK, p, r, init_qpos=q)
        out.append(q)
    return f"{jumps(np.array(out))} jumps"


def envs(model: RobotModel, q_path: np.ndarray) -> str:
    from app.envs import make_env

    env = make_env(ROOT / "configs" / "pick_place.yaml", action_mode="ee_pose", max_episode_steps=N, fps=30)
    env.reset(seed=0)
    world = env.unwrapped.core.world
    world.robot.set_qpos(q_path[0][None])  # starts on the path
    world.controller.reset()
    solver, answers = world.controller._solver, []
    solve_rows = solver.solve_rows

    def watched(*args):
        info = solve_rows(*args)
        answers.append(np.atleast_2d(info.q)[0].copy())
        return info

    solver.solve_rows = watched
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q_path, [LINK]))
    info = {}
    for p, r in zip(pos, quat):
        _, _, terminated, truncated, info = env.step(np.r_[p, r, 0.02])
        if terminated or truncated:
            break
    env.close()
    return f"{jumps(np.array(answers))} jumps over {len(answers)} ticks; branch changes told: " \
           f"{info.get('motion_branch_changes', 'n/a')}"


def trossen_arm(model: RobotModel, q_path: np.ndarray) -> str:
    from app.trossen_arm.cartesian import ToolKinematics
    from app.trossen_arm.joint_space import JointMap

    tool = ToolKinematics(model, JointMap.of(model), np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    q, out, missed = q_path[0], [], 0
    for qi in q_path:
        found = tool.solve(tool.tool_pose(qi), q, refine=True)
        missed += found is None
        q = q if found is None else found
        out.append(q)
    return f"{jumps(np.array(out))} jumps, {missed} unsolved"


def planner(model: RobotModel, q_path: np.ndarray) -> str:
    from app.collision import World, collision_model
    from app.planning.goals import PoseGoal, pose_goals
    from app.planning.space import PlanningSpace

    space = PlanningSpace(model, collision_model(model, World()), q_path[0])
    pos, quat = (a[:, 0] for a in model.forward_kinematics(q_path, [LINK]))
    q, out, none = q_path[0], [], 0
    for p, r in zip(pos, quat):
        goals = pose_goals(space, PoseGoal(LINK, p, r), q)
        if len(goals.q) == 0:
            none += 1
            continue
        q = space.full(goals.q[0])
        out.append(q)
    return f"{jumps(np.array(out))} jumps, {none} waypoints without a goal"


CALLERS = {"genesis": genesis, "envs": envs, "trossen_arm": trossen_arm, "planner": planner}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callers", nargs="+", choices=list(CALLERS), default=list(CALLERS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("app").setLevel(logging.ERROR)
    model = RobotModel.from_urdf(URDF)
    for name, q_path in traced_paths(model).items():
        for caller in args.callers:
            log.info("%-34s %-12s %s", name, caller, CALLERS[caller](model, q_path))


if __name__ == "__main__":
    main()
