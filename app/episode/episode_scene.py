"""One episode's scene: every object's start pose and the place target. Drawn from a seed as ``app.run`` draws its
environment 0 for that seed (app.episode.motion_factory.object_starts, ObjectTask.places), so
an environment (app.envs) whose episode seed is s starts as ``app.run CONFIG --seed s`` does in its first
environment; the scenes of a run's environments (what ``app.record`` writes per episode in
``meta/episode_scenes.jsonl``); or given whole (a recorded episode's)."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from app.config.schema import RunConfig
from app.episode.motion_factory import object_starts
from app.errors import InputError
from app.specs.object_spec import ObjectSpec, depth_into_top
from app.tasks import object_task
from app.validation import check_spec, convert, type_hints


class EpisodeScene(NamedTuple):
    """objects: name -> (pos (3,) [m], quat (4,) wxyz), environment frame; place: the task's place target (2,)
    [m] (None: a task that places nothing); seed: the draw's (None: given, not drawn)."""

    objects: dict[str, tuple[np.ndarray, np.ndarray]]
    place: np.ndarray | None
    seed: int | None

    def as_dict(self) -> dict:
        """JSON-ready: {"seed", "objects": {name: {"pos", "quat_wxyz"}}, "place_xy"}."""
        return {"seed": self.seed,
                "objects": {k: {"pos": p.tolist(), "quat_wxyz": q.tolist()} for k, (p, q) in self.objects.items()},
                "place_xy": None if self.place is None else self.place.tolist()}

    @classmethod
    def from_dict(cls, data: dict, run: RunConfig, where: str) -> EpisodeScene:
        """The scene ``data`` (as :meth:`as_dict` writes it) for the objects of ``run``; InputError naming
        ``where`` when an object is missing or a value is not finite."""
        try:
            objects = {o.name: (np.asarray(data["objects"][o.name]["pos"], dtype=float).reshape(3),
                                np.asarray(data["objects"][o.name]["quat_wxyz"], dtype=float).reshape(4))
                       for o in run.scene_config.objects}
            place = None if data.get("place_xy") is None else np.asarray(data["place_xy"], dtype=float).reshape(2)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: an episode scene needs objects {[o.name for o in run.scene_config.objects]} "
                             f"with pos (3) and quat_wxyz (4), and place_xy (2) or null: {exc}") from None
        values = [v for p, q in objects.values() for v in (p, q)] + ([] if place is None else [place])
        if not all(np.all(np.isfinite(v)) for v in values):
            raise InputError(f"{where}: an episode scene's poses must be finite numbers")
        _check_plausible(data["objects"], objects, place, run, where)
        return cls(objects, place, data.get("seed"))


MAX_SCENE_REACH_M = 2.0  # an episode scene's objects and place target lie within this of the environment's origin
QUAT_NORM_TOL = 1e-3     # a given quaternion's norm within 1 +- this
TABLE_TOL_M = 0.002      # how far an object may sink into the table top (contact slop)


def _check_plausible(given: dict, objects: dict, place: np.ndarray | None, run: RunConfig, where: str) -> None:
    """InputError naming ``where`` and the object for a scene no episode could start from: an object the config
    lacks, a quaternion not of unit norm, an object or place target farther than MAX_SCENE_REACH_M from the
    environment's origin, a primitive object (box, cylinder, sphere) sunk into the table top."""
    unknown = sorted(str(k) for k in given if k not in objects)
    if unknown:
        raise InputError(f"{where}: objects {unknown} are not in the config's scene, which has "
                         f"{sorted(objects)}")
    specs = {o.name: o for o in run.scene_config.objects}
    table = run.scene_config.table
    upright_table = table is not None and np.allclose(table.quat, (1.0, 0.0, 0.0, 0.0))  # else not judged
    for name, (pos, quat) in objects.items():
        at = f"{where}: objects.{name}"
        if abs(np.linalg.norm(quat) - 1.0) > QUAT_NORM_TOL:
            raise InputError(f"{at}.quat_wxyz: must be a unit quaternion (norm 1 +- {QUAT_NORM_TOL:g}), "
                             f"got norm {np.linalg.norm(quat):.6g}")
        if np.linalg.norm(pos) > MAX_SCENE_REACH_M:
            raise InputError(f"{at}.pos: {np.round(pos, 3).tolist()} is {np.linalg.norm(pos):.3g} m from the "
                             f"environment's origin; a scene's objects lie within {MAX_SCENE_REACH_M} m")
        primitive = specs[name].shape in ("box", "cylinder", "sphere")  # a file's size is PyBullet's to know
        sunk = depth_into_top(table, pos, pos, specs[name].half_height()) if upright_table and primitive else -np.inf
        if sunk > TABLE_TOL_M:
            raise InputError(f"{at}.pos: the object's centre at z = {pos[2]:.4g} m puts it {1e3 * sunk:.1f} mm "
                             f"into the table top (z = {table.top():.4g} m); it rests at z >= "
                             f"{table.top() + specs[name].half_height():.4g} m")
    if place is not None and np.linalg.norm(place) > MAX_SCENE_REACH_M:
        raise InputError(f"{where}: place_xy {np.round(place, 3).tolist()} is {np.linalg.norm(place):.3g} m from "
                         f"the environment's origin; a place target lies within {MAX_SCENE_REACH_M} m")


BODY_FIELDS = {"box": ("size",), "cylinder": ("radius", "height"), "sphere": ("radius",), "urdf": ("file", "scale"),
               "mesh": ("file", "scale")}  # an object's shape -> the fields that size it


def object_bodies(run: RunConfig) -> dict[str, dict]:
    """Every object of ``run``'s scene as a body: name -> {"shape", its sizes [m] (BODY_FIELDS), "mass" [kg],
    "friction", "spinning_friction", "rolling_friction", "rgba"}; JSON-ready (what a recorded episode's line keeps,
    so a replay can tell whether its config builds the same bodies)."""
    out = {}
    for o in run.scene_config.objects:
        sizes = {k: (list(getattr(o, k)) if isinstance(getattr(o, k), tuple) else getattr(o, k))
                 for k in BODY_FIELDS.get(o.shape, ())}
        out[o.name] = {"shape": o.shape, **sizes, "mass": o.mass, "friction": o.friction,
                       "spinning_friction": o.spinning_friction, "rolling_friction": o.rolling_friction,
                       "rgba": list(o.rgba)}
    return out


def check_bodies(recorded: object, where: str) -> dict[str, dict]:
    """A recorded line's ``bodies`` (as :func:`object_bodies` writes them) checked as a scene's objects are: known
    keys, a known shape, sizes, mass, friction and colour in range (a file's path is not looked for: the replay
    builds its config's bodies). Returns ``recorded``; InputError "where: bodies.NAME.KEY: ..." otherwise."""
    if not isinstance(recorded, dict):
        raise InputError(f"{where}: bodies must map object names to bodies, got {recorded!r:.80}")
    hints, keys = type_hints(ObjectSpec), ("shape", "mass", "friction", "spinning_friction", "rolling_friction",
                                           "rgba", *{k for fields in BODY_FIELDS.values() for k in fields})
    for name, fields in recorded.items():
        at = f"{where}: bodies.{name}"
        if not isinstance(fields, dict):
            raise InputError(f"{at}: expected a mapping of the body's values, got {fields!r:.80}")
        unknown = sorted(str(k) for k in fields if k not in keys)
        if unknown:
            raise InputError(f"{at}: unknown keys {unknown}; a body holds {sorted(keys)}")
        values = {k: convert(hints[k], v, f"{at}.{k}", InputError) for k, v in fields.items() if k != "file"}
        if values.get("shape") in ("urdf", "mesh"):
            values["shape"] = "box"  # its own sizes are the file's, not checked here
        check_spec(ObjectSpec(name=str(name), **values), at)
    return recorded


def bodies_differ(recorded: dict, built: dict, tol: float = 1e-9) -> list[str]:
    """'name.field: recorded vs built' for each body value of ``recorded`` (as :func:`object_bodies` writes
    it) that ``built`` lacks or holds otherwise (numbers within ``tol``); one line for a body ``built`` lacks."""
    out = []
    for name, fields in recorded.items():
        if name not in built:
            out.append(f"{name}: recorded, but not in this config's scene (replay with the recording's --config)")
            continue
        for key, value in fields.items():
            have = built.get(name, {}).get(key)
            same = have == value
            if not same and have is not None and not isinstance(value, str):
                a, b = np.atleast_1d(np.asarray(value, dtype=float)), np.atleast_1d(np.asarray(have, dtype=float))
                same = a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol))
            if not same:
                out.append(f"{name}.{key}: recorded {value}, this config {have}")
    return out


def run_scenes(run: RunConfig, n_envs: int) -> list[EpisodeScene]:
    """The scene of each of a run's ``n_envs`` environments (its seed's draws; ``seed`` there is the run's)."""
    starts = object_starts(run, n_envs)
    task = run.motion
    places = task.places(starts, run.seed) if object_task(task) else None
    return [EpisodeScene({name: (pos[e], quat[e]) for name, (pos, quat) in starts.items()},
                         None if places is None else places[e], run.seed) for e in range(n_envs)]


def draw_scene(run: RunConfig, seed: int) -> EpisodeScene:
    """The scene of an episode seeded ``seed`` (see the module docstring)."""
    return run_scenes(dataclasses.replace(run, seed=int(seed)), 1)[0]
