"""A batch of planning problems from a YAML file (``python -m app.plan``), and one problem solved.

The file::

    robot: assets/urdf/widowx_ai.urdf      # relative to the file's folder, else to the working directory
    boxes:                                 # what to avoid, in the robot's base frame [m]
      - {name: table, half: [0.4, 0.35, 0.02], pos: [0.25, 0.0, -0.02]}
    options: {planner: RRTConnect, timeout: 1.0, min_distance: 0.01}   # PlanOptions' fields
    rate: 200                              # [Hz] the timed trajectories' samples
    problems:
      - name: over_the_wall
        start: [0.0, 1.2, 1.0, -0.3, 0.0, 0.0, 0.044, 0.044]            # (n_dofs,) [rad, m]
        goal: [...]                        # joints (n_dofs,) or a list of them (any may be reached), or
        goal_pose: {link: ee_gripper_link, pos: [0.3, 0.1, 0.1], quat: [0, 1, 0, 0], rot_mask: [1, 1, 1]}
        seed: 7                            # optional: else options.seed + the problem's index

Unknown keys, missing ones and values of the wrong type are ConfigErrors naming the file and the key. Each
problem is planned on its own with its own seed (app.planning reseeds OMPL per search), so the answers are the
same on any number of workers.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import NamedTuple

import numpy as np
import yaml

from app.collision import World, WorldBox
from app.collision.world import box_frame
from app.errors import AppError, ConfigError, InputError
from app.planning.clearance import path_clearance
from app.planning.goals import PoseGoal
from app.planning.planner import PlanOptions, check_goal, check_start, model_collision, plan
from app.planning.timing import time_parameterize
from app.validation import (
    MAX_MAGNITUDE,
    as_mask,
    as_rot_mask,
    convert,
    plain_name_problem,
    seed_problem,
    type_hints,
    unknown_key,
)

PROBLEM_KEYS = ("name", "start", "goal", "goal_pose", "seed")
POSE_KEYS = ("link", "pos", "quat", "pos_mask", "rot_mask")
MAX_PROBLEMS = 10_000  # per file: each may search for its whole timeout
MAX_RATE = 10_000.0  # [Hz] of the timed paths' samples
TOP_KEYS = ("robot", "boxes", "options", "rate", "problems")
BOX_KEYS = ("name", "half", "pos", "quat")


class Problem(NamedTuple):
    """One problem: name, start (n_dofs,), goal (joints (n,) / (G, n) or a PoseGoal), seed."""

    name: str
    start: np.ndarray
    goal: object
    seed: int


class Batch(NamedTuple):
    """A problems file read: robot (description path), world, options, rate [Hz], problems."""

    robot: str
    world: World
    options: PlanOptions
    rate: float
    problems: tuple[Problem, ...]


def _mapping(value: object, keys: tuple[str, ...], where: str, required: tuple[str, ...] = ()) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {value!r:.80}")
    for key in value:
        if key not in keys:
            raise unknown_key(key, list(keys), where)
    for key in required:
        if key not in value:
            raise ConfigError(f"{where}: missing key '{key}'")
    return value


def _floats(value: object, where: str, shape: tuple | None = None) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected numbers, got {value!r:.80}") from None
    if (shape is not None and arr.shape != shape) or arr.size == 0 or not np.isfinite(arr).all():
        raise ConfigError(f"{where}: expected finite numbers{'' if shape is None else f' of shape {shape}'}, "
                          f"got {value!r:.80}")
    if np.abs(arr).max() > MAX_MAGNITUDE:
        raise ConfigError(f"{where}: must be within +-{MAX_MAGNITUDE:g} (m, rad), got {value!r:.80}")
    return arr


def _options(value: object, where: str) -> PlanOptions:
    fields = {f.name for f in dataclasses.fields(PlanOptions)}
    data = _mapping(value, tuple(sorted(fields)), where)
    hints = type_hints(PlanOptions)
    kwargs = {k: convert(hints[k], v, f"{where}.{k}", ConfigError) for k, v in data.items()}
    try:
        return PlanOptions(**kwargs)
    except AppError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _pose(value: object, where: str) -> PoseGoal:
    data = _mapping(value, POSE_KEYS, where, ("link", "pos"))
    try:
        mask = {k: tuple(check(data[k], k).tolist()) for k, check in (("pos_mask", as_mask), ("rot_mask", as_rot_mask))
                if k in data}
    except InputError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return PoseGoal(str(data["link"]), tuple(_floats(data["pos"], f"{where}.pos", (3,))),
                    tuple(_floats(data.get("quat", (1.0, 0.0, 0.0, 0.0)), f"{where}.quat", (4,))), **mask)


def _problem(value: object, where: str, index: int, base_seed: int) -> Problem:
    data = _mapping(value, PROBLEM_KEYS, where, ("start",))
    if ("goal" in data) == ("goal_pose" in data):
        raise ConfigError(f"{where}: give one of 'goal' (joints) or 'goal_pose'")
    goal = _pose(data["goal_pose"], f"{where}.goal_pose") if "goal_pose" in data else \
        _floats(data["goal"], f"{where}.goal")
    seed = convert(int, data.get("seed", base_seed + index), f"{where}.seed", ConfigError)
    name = data.get("name", f"problem_{index}")
    for key, problem in (("seed", seed_problem(seed)), ("name", plain_name_problem(name))):
        if problem is not None:
            raise ConfigError(f"{where}.{key}: {problem}")
    return Problem(name, _floats(data["start"], f"{where}.start"), goal, seed)


def _boxes(items: object, path: Path) -> list[WorldBox]:
    """The file's boxes, each checked (half extents > 0, a nonzero quaternion, a name of its own)."""
    if not isinstance(items, list):
        raise ConfigError(f"{path}: boxes: expected a list of boxes, got {items!r:.80}")
    boxes = []
    for i, b in enumerate(items):
        where = f"{path}: boxes[{i}]"
        b = _mapping(b, BOX_KEYS, where, ("half", "pos"))
        box = WorldBox(str(b.get("name", f"box{i}")), tuple(_floats(b["half"], f"{where}.half", (3,)).tolist()),
                       tuple(_floats(b["pos"], f"{where}.pos", (3,)).tolist()),
                       tuple(_floats(b.get("quat", (1, 0, 0, 0)), f"{where}.quat", (4,)).tolist()))
        try:
            box_frame(box)
        except InputError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if any(box.name == other.name for other in boxes):
            raise ConfigError(f"{where}.name: {box.name!r} names an earlier box too; each box its own name (the "
                              "reports name the closest pair by it)")
        boxes.append(box)
    return boxes


def read_problems(path: str | Path) -> Batch:
    """The file ``path`` read and checked (see the module docstring); ConfigError "file: key: ..." otherwise."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); a problems file is YAML") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply for a problems file") from None
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read it as YAML ({exc})") from None
    data = _mapping(data, TOP_KEYS, f"{path}:", ("robot", "problems"))
    robot = Path(str(data["robot"]))
    robot = robot if robot.is_absolute() or not (path.parent / robot).exists() else path.parent / robot
    boxes = _boxes(data.get("boxes") or [], path)
    options = _options(data.get("options") or {}, f"{path}: options")
    rate = convert(float, data.get("rate", 200.0), f"{path}: rate", ConfigError)
    if not 0 < rate <= MAX_RATE:
        raise ConfigError(f"{path}: rate: must be in (0, {MAX_RATE:g}] Hz, got {rate}")
    items = data["problems"]
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{path}: problems: expected a list of at least one problem")
    if len(items) > MAX_PROBLEMS:
        raise ConfigError(f"{path}: problems: {len(items)} problems; a file takes at most {MAX_PROBLEMS} (split it)")
    problems = tuple(_problem(p, f"{path}: problems[{i}]", i, options.seed) for i, p in enumerate(items))
    names = [p.name for p in problems]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{path}: problems: names must be unique (they key plans.json), {twice} repeat")
    return Batch(str(robot), World(boxes=tuple(boxes)), options, float(rate), problems)


def check_problems(model, batch: Batch, path: str | Path) -> None:
    """Every problem's start and goal checked against ``model`` before any planning (plan()'s own checks:
    shapes, joint windows, links, quaternions, masks); ConfigError "file: problems[i].key: ..." otherwise."""
    for i, problem in enumerate(batch.problems):
        goal_key = "goal_pose" if isinstance(problem.goal, PoseGoal) else "goal"
        for key, check, value in (("start", check_start, problem.start), (goal_key, check_goal, problem.goal)):
            try:
                check(model, value)
            except AppError as exc:
                raise ConfigError(f"{path}: problems[{i}].{key} ({problem.name}): {exc}") from None


def solve_problem(model, batch: Batch, problem: Problem) -> dict:
    """One problem planned (and timed where it succeeds): a JSON-ready dict with the reason, planning time [s],
    lengths [rad], the closest clearance along the final path [m], and the arrays ``path`` (N, n_dofs) and
    ``trajectory`` (K, n_dofs) at ``batch.rate`` (empty on failure) under ``arrays``."""
    res = plan(model, problem.goal, problem.start, world=batch.world,
               options=dataclasses.replace(batch.options, seed=problem.seed))
    out = {"name": problem.name, "success": bool(res.success), "reason": res.reason, "detail": res.detail,
           "seed": problem.seed, "planning_s": round(res.seconds, 4), "path_length_rad": res.length,
           "raw_length_rad": res.raw_length, "waypoints": len(res.path)}
    arrays = {"path": res.path, "trajectory": np.zeros((0, model.n_dofs))}
    if res.success:
        traj = time_parameterize(res.path, model.v_max, rate=batch.rate)
        out |= {"duration_s": traj.duration, **path_clearance(model_collision(model, batch.world, None), traj.q)}
        arrays["trajectory"] = traj.q
    return {**out, "arrays": arrays}
