"""Value checks of the manipulation sections: scene objects, the gripper, and the ``pick_place`` and
``script`` tasks. Each check is (where, ok, message), as app.config.loader's others; the robot model is
given where joint names and efforts are checked."""

from __future__ import annotations

import dataclasses

import math
from pathlib import Path

from app.config.schema import OBJECT_SHAPES, ObjectSection, RunConfig
from app.control.handover import HandoverMotion
from app.control.pick_place import PickPlaceMotion
from app.control.script import ScriptMotion
from app.control.motions import FingertipsMotion

AXIS_NAMES = ("x", "y", "z", "+x", "+y", "+z", "-x", "-y", "-z")


def object_checks(run: RunConfig, key, f: str) -> list[tuple]:
    """Every object's values; ``key(*keys)`` says where a scene value came from (file and key path)."""
    s = run.scene_config
    checks, names = [], [b.name for b in (s.table, s.floor, *s.obstacles) if b is not None]
    for i, o in enumerate(s.objects):
        k = lambda field: f"{key('objects')}[{i}].{field}"  # noqa: E731
        checks += [
            (k("name"), o.name not in names, f"{o.name!r} is already the name of a box or an object; names are unique"),
            (k("shape"), o.shape in OBJECT_SHAPES, f"{o.shape!r} is not one of {list(OBJECT_SHAPES)}"),
            (k("mass"), o.mass > 0, f"must be > 0 kg, got {o.mass}"),
            (k("size"), all(x > 0 for x in o.size), f"every side must be > 0 m, got {o.size}"),
            (k("radius"), o.radius > 0, f"must be > 0 m, got {o.radius}"),
            (k("height"), o.height > 0, f"must be > 0 m, got {o.height}"),
            (k("scale"), o.scale > 0, f"must be > 0, got {o.scale}"),
            (k("friction"), min(o.friction, o.spinning_friction, o.rolling_friction) >= 0,
             "friction, spinning_friction and rolling_friction must be >= 0"),
            (k("rgba"), all(0 <= x <= 1 for x in o.rgba), f"values must be in [0, 1], got {o.rgba}"),
            (k("file"), o.shape not in ("urdf", "mesh") or (o.file is not None and Path(o.file).is_file()),
             f"shape {o.shape!r} needs an existing file, got {o.file!r}"),
            (k("pos_range"), o.pos_range is None or all(lo <= hi for lo, hi in zip(*o.pos_range)),
             f"needs [[x_lo, y_lo, z_lo], [x_hi, y_hi, z_hi]] with lo <= hi, got {o.pos_range}"),
            (k("yaw_range"), o.yaw_range is None or o.yaw_range[0] <= o.yaw_range[1],
             f"needs [lo, hi] with lo <= hi [rad], got {o.yaw_range}"),
        ]
        names.append(o.name)
        if s.table is not None and o.shape in ("box", "cylinder", "sphere"):
            checks.append(_above_table(o, s.table, k("pos_range" if o.pos_range else "pos")))
    return checks


def _half_height(o: ObjectSection) -> float:
    return {"box": o.size[2] / 2, "cylinder": o.height / 2}.get(o.shape, o.radius)


def _above_table(o: ObjectSection, table, where: str) -> tuple:
    """An object whose start may overlap the table top (its footprint over the table) is an error."""
    lows = [o.pos] if o.pos_range is None else [o.pos_range[0]]
    bottom = min(p[2] for p in lows) - _half_height(o)
    top = table.pos[2] + table.size[2] / 2
    xy = o.pos if o.pos_range is None else o.pos_range[0]
    over = all(abs(xy[a] - table.pos[a]) <= table.size[a] / 2 for a in (0, 1))
    return (where, not over or bottom >= top - 1e-3,
            f"object {o.name!r} would start inside the table: its bottom at z = {bottom:.4f} m, the table top at "
            f"z = {top:.4f} m; raise its z to at least {top + _half_height(o):.4f} m")


def gripper_checks(run: RunConfig, model, key) -> list[tuple]:
    """Every gripper's joints, values, force (never above the URDF effort) and axes: the robot's, or those of
    the robots of a rig (their joints named NAME/... in the rig's model)."""
    s = run.scene_config
    if not s.robots:
        checks = [] if s.robot.gripper is None else \
            one_gripper_checks(s.robot.gripper, model, lambda field: key("robot", "gripper", field))
        arms, named = sorted(s.robot.arms or {}), [g.arm for g in s.robot.grippers]
        for i, g in enumerate(s.robot.grippers):
            k = lambda field, i=i: key("robot", "grippers") + f"[{i}].{field}"  # noqa: E731
            checks.append((k("arm"), g.arm in arms and named.count(g.arm) == 1 and s.robot.gripper is None,
                           f"must name one of the arms {arms} (robot.arms), each at most once, with no robot.gripper "
                           f"beside robot.grippers; got {g.arm!r}"))
            checks += one_gripper_checks(g, model, k)
        return checks
    checks = []
    for i, (arm, g) in enumerate((r.name, r.gripper) for r in s.robots):
        if g is not None:
            prefixed = dataclasses.replace(g, joints=tuple(f"{arm}/{j}" for j in g.joints))
            checks += one_gripper_checks(prefixed, model, lambda field, i=i: f"{run.scene}: robots[{i}].gripper.{field}")
    return checks


def one_gripper_checks(g, model, k) -> list[tuple]:
    """One gripper section ``g`` against ``model``; ``k(field)`` says where a field came from."""
    dofs = list(model.dof_names)
    bad = [j for j in g.joints if j not in dofs]
    checks = [(k("joints"), len(g.joints) >= 1 and not bad and len(set(g.joints)) == len(g.joints),
               f"{list(g.joints)}: must name distinct movable joints of the robot, one per finger; "
               f"{'unknown ' + str(bad) + '; ' if bad else ''}valid: {dofs}")]
    if bad or not g.joints:
        return checks
    effort = min(model.effort_max[model.dof_index(j)] for j in g.joints)
    checks += [
        (k("force"), 0 < g.force <= effort, f"must be in (0, {effort:g}] N (the URDF effort of {list(g.joints)}), "
                                            f"got {g.force}"),
        (k("friction"), g.friction >= 0, f"must be >= 0, got {g.friction}"),
        (k("approach_axis"), g.approach_axis in AXIS_NAMES, f"{g.approach_axis!r} is not one of {list(AXIS_NAMES)}"),
        (k("closing_axis"), g.closing_axis in AXIS_NAMES and g.closing_axis.lstrip("+-") != g.approach_axis.lstrip("+-"),
         f"{g.closing_axis!r} must be one of {list(AXIS_NAMES)} and differ from approach_axis {g.approach_axis!r}"),
    ]
    for name, values in (("open", g.open), ("closed", g.closed)):
        if values is not None:
            ok = len(values) in (1, len(g.joints)) and all(
                model.q_lower[model.dof_index(j)] <= v <= model.q_upper[model.dof_index(j)]
                for j, v in zip(g.joints, values * len(g.joints) if len(values) == 1 else values))
            checks.append((k(name), ok, f"needs one value per joint {list(g.joints)} (or one for all) within "
                                        f"their limits, got {list(values)}"))
    return checks


def task_checks(run: RunConfig, f: str) -> list[tuple]:
    """The pick_place and script tasks' values, and what they need of the scene."""
    t, s, k = run.task, run.scene_config, lambda field: f"{f}: task.{field}"  # noqa: E731
    if isinstance(t, FingertipsMotion) and s.robot.gripper is not None:
        return [(k("type"), False, "'fingertips' moves the finger joints, which robot.gripper owns; "
                                   "remove the gripper section or choose another task")]
    if isinstance(t, ScriptMotion):
        return _script_checks(t, s.robot.gripper is not None, k)
    if isinstance(t, HandoverMotion):
        return _handover_checks(t, s, k)
    if not isinstance(t, PickPlaceMotion):
        return []
    objects = [o.name for o in s.objects]
    shape = next((o.shape for o in s.objects if o.name == t.object), "box")
    return [
        (k("object"), t.object in objects, f"{t.object!r} is not an object of the scene; objects: {objects}"),
        (k("object"), shape in ("box", "cylinder", "sphere"),
         f"{t.object!r} is a {shape}: pick_place takes its grasp geometry from a box's, cylinder's or sphere's "
         "sizes, which a file does not give"),
        (k("type"), s.robot.gripper is not None, "pick_place needs a gripper: add robot.gripper to the scene"),
        (k("grasp_depths"), len(t.grasp_depths) > 0 and all(0 < d <= 1 for d in t.grasp_depths),
         f"fractions of the object's height in (0, 1], at least one, got {list(t.grasp_depths)}"),
        (k("grasp_tilts"), len(t.grasp_tilts) > 0 and all(abs(a) < math.pi / 2 for a in t.grasp_tilts),
         f"angles in (-pi/2, pi/2) rad, at least one, got {list(t.grasp_tilts)}"),
        (k("grasp_yaws"), 1 <= t.grasp_yaws <= 64, f"must be 1..64 closing directions, got {t.grasp_yaws}"),
    ] + _place_and_timing_checks(t, k)


POSITIVE = ("approach_height", "lift_height", "speed", "accel", "angular_speed", "pos_tol", "rot_tol", "phase_timeout",
            "close_time", "slip_tol", "success_tol")  # what pick_place and handover time and judge by


def _place_and_timing_checks(t, k) -> list[tuple]:
    """The place target's range and the heights, speeds, tolerances and times a pick_place or handover shares."""
    return [
        (k("place_range"), t.place_range is None or all(lo <= hi for lo, hi in zip(*t.place_range)),
         f"needs [[x_lo, y_lo], [x_hi, y_hi]] with lo <= hi, got {t.place_range}"),
        (k("min_separation"), t.min_separation >= 0, f"must be >= 0 m, got {t.min_separation}"),
    ] + [(k(name), getattr(t, name) > 0, f"must be > 0, got {getattr(t, name)}") for name in POSITIVE]


def _script_checks(t: ScriptMotion, has_gripper: bool, k) -> list[tuple]:
    rows = t.waypoints
    times = [r.t for r in rows]
    return [
        (k("waypoints"), len(rows) >= 1 and times[0] == 0.0, "needs rows {t, pos, quat, gripper}, the first at t: 0"),
        (k("waypoints"), all(b > a for a, b in zip(times, times[1:])), f"times must increase strictly, got {times}"),
        (k("waypoints"), all(any(r.quat) for r in rows), "every quat must be a nonzero (w, x, y, z) quaternion"),
        (k("waypoints"), all(0 <= r.gripper <= 1 for r in rows), "gripper must be in [0, 1] (0 open, 1 closed)"),
        (k("waypoints"), has_gripper or all(r.gripper == 0 for r in rows),
         "rows close the gripper but the scene's robot has none: add robot.gripper"),
    ]


def _handover_checks(t: HandoverMotion, s, k) -> list[tuple]:
    """A hand-over needs two different arms of the scene's robots, each with a gripper, and a box to hand over."""
    arms = sorted((s.robot.arms or {}))
    grippers = sorted([r.name for r in s.robots if r.gripper is not None] + [g.arm for g in s.robot.grippers])
    objects = {o.name: o for o in s.objects}
    obj = objects.get(t.object)
    depth_ok = obj is not None and all(0 < d < obj.size[2] for d in (t.give_depth, t.take_depth))
    return [
        (k("object"), obj is not None, f"{t.object!r} is not an object of the scene; objects: {sorted(objects)}"),
        (k("object"), obj is None or obj.shape == "box", f"{t.object!r}: a hand-over takes its grips from a box's "
                                                         f"faces, got a {obj.shape if obj else ''}"),
        (k("giver"), t.giver in arms and t.giver != t.taker, f"{t.giver!r} must be one of the arms {arms} (scene "
                                                             f"robots:), other than the taker {t.taker!r}"),
        (k("taker"), t.taker in arms, f"{t.taker!r} must be one of the arms {arms} (scene robots:)"),
        (k("type"), {t.giver, t.taker} <= set(grippers), f"both arms need a gripper (robots[].gripper); arms with "
                                                         f"one: {grippers}"),
        (k("give_depth"), depth_ok, "give_depth and take_depth must be in (0, the object's height) m, got "
                                    f"{t.give_depth}, {t.take_depth}"),
    ] + _place_and_timing_checks(t, k)
