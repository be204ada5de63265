"""One episode's randomised values (the run's ``randomization:``, app.config.randomization), drawn from the
episode's seed and applied to its run.

Episode ``env`` of a run seeded ``seed`` draws each part (lighting, colours, cameras, objects, gripper, noise) from
its own generator ``numpy.random.default_rng([seed, 38, env, part])``: the same values whichever worker records the
episode, in whatever block, and a part switched on or off leaves the others' draws as they were. The draws are a
JSON-ready mapping (written with the episode in ``meta/episode_scenes.jsonl`` under ``randomization``); applied to
the run they give the episode's own run (:func:`randomized`), which rebuilds its scene (a replay's too).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from app.config.randomization import RandomizationConfig, randomization_of
from app.config.schema import RunConfig
from app.episode.episode_scene import EpisodeScene, object_bodies, run_scenes
from app.errors import InputError
from app.kinematics.rotations import quat_multiply, quat_normalize
from app.specs.look_spec import PRESETS

PARTS = ("lighting", "colors", "cameras", "objects", "gripper", "noise")


def generator(run: RunConfig, env: int, part: str) -> np.random.Generator:
    """The generator of episode ``env``'s ``part`` (see the module docstring)."""
    section = randomization_of(run)
    stream = section.seed_stream if section is not None else 38
    return np.random.default_rng([int(run.seed), stream, int(env), PARTS.index(part)])


def draw(run: RunConfig, env: int) -> dict:
    """Episode ``env``'s drawn values: {part: values} for the parts the run randomises ({} without any)."""
    section = randomization_of(run)
    if section is None:
        return {}
    out = {}
    for part in PARTS:
        spec = getattr(section, part)
        if spec is not None:
            out[part] = _DRAWS[part](spec, run.scene_config, generator(run, env, part))
    return out


def _tilted(direction: np.ndarray, max_deg: float, rng: np.random.Generator) -> np.ndarray:
    """``direction`` (3,) turned by an angle uniform in [0, max_deg] about a random axis across it; unit."""
    d = direction / np.linalg.norm(direction)
    other = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, other)
    u /= np.linalg.norm(u)
    v = np.cross(d, u)
    phi, theta = rng.uniform(0, 2 * np.pi), np.radians(rng.uniform(0, max_deg))
    return np.cos(theta) * d + np.sin(theta) * (np.cos(phi) * u + np.sin(phi) * v)


def _lighting(spec, scene, rng) -> dict:
    look = scene.look.resolved()
    base = np.asarray(look.light_direction or PRESETS["kit"].light_direction, dtype=float)
    out = {"light_direction": _tilted(base, spec.direction_deg, rng).tolist()}
    if spec.color is not None:
        out["light_color"] = rng.uniform(*np.asarray(spec.color, dtype=float)).tolist()
    for key in ("ambient", "diffuse", "specular"):
        if getattr(spec, key) is not None:
            out[key] = float(rng.uniform(*getattr(spec, key)))
    return out


def _colors(spec, scene, rng) -> dict:
    out = {"objects": {}}
    if scene.table is not None:
        textured = bool(scene.look.resolved().table_texture)
        base = scene.look.resolved().table_tint if textured else scene.table.rgba[:3]
        out["table_rgb"] = np.clip(np.asarray(base) + rng.uniform(-spec.table, spec.table, 3), 0, 1).tolist()
        out["table_textured"] = textured
    for obj in scene.objects:
        out["objects"][obj.name] = np.clip(np.asarray(obj.rgba[:3]) + rng.uniform(-spec.objects, spec.objects, 3),
                                           0, 1).tolist()
    return out


def _cameras(spec, scene, rng) -> dict:
    out = {}
    for cam in scene.cameras:
        fov = float(cam.fov + rng.uniform(-spec.fov_deg, spec.fov_deg))
        if cam.link is None:
            out[cam.name] = {"eye": (np.asarray(cam.eye) + rng.uniform(-spec.position, spec.position, 3)).tolist(),
                             "target": (np.asarray(cam.target) + rng.uniform(-spec.target, spec.target, 3)).tolist(),
                             "fov": fov}
            continue
        axis = rng.normal(size=3)
        axis /= max(np.linalg.norm(axis), 1e-12)
        angle = np.radians(rng.uniform(0, spec.rotation_deg))
        turn = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
        quat = quat_multiply(quat_normalize(np.asarray(cam.offset_quat, dtype=float)), turn)
        out[cam.name] = {"offset_pos": (np.asarray(cam.offset_pos) + rng.uniform(-spec.position, spec.position,
                                                                                  3)).tolist(),
                         "offset_quat_wxyz": quat.tolist(), "fov": fov}
    return out


def _objects(spec, scene, rng) -> dict:
    out = {}
    for obj in scene.objects:
        values = {}
        for key, scale in (("size_scale", spec.size_scale), ("mass_scale", spec.mass_scale)):
            if scale is not None:
                values[key] = float(rng.uniform(*scale))
        if spec.friction is not None:
            values["friction"] = float(rng.uniform(*spec.friction))
        out[obj.name] = values
    return out


def _gripper(spec, scene, rng) -> dict:
    robot = scene.robot
    keys = ([""] if robot.gripper is not None else []) + [g.arm for g in robot.grippers]
    return {"force": {key: float(rng.uniform(*spec.force)) for key in keys}} if spec.force is not None else {}


def _noise(spec, scene, rng) -> dict:
    return {"action_std": spec.action_std, "observation_std": spec.observation_std}


_DRAWS = {"lighting": _lighting, "colors": _colors, "cameras": _cameras, "objects": _objects,
          "gripper": _gripper, "noise": _noise}


def randomized(run: RunConfig, draws: dict) -> RunConfig:
    """The episode's own run: ``run`` with ``draws`` (as :func:`draw` gives them) applied to its scene, and no
    randomisation left to draw except the noise (applied to the recorded columns, :func:`noisy`). InputError for
    draws that do not fit the run (a camera or object it lacks, a value of the wrong shape)."""
    scene = run.scene_config
    try:
        scene = _apply_look(scene, draws.get("lighting"), draws.get("colors"))
        scene = _apply_objects(scene, draws.get("objects", {}), draws.get("colors", {}).get("objects", {}))
        scene = _apply_cameras(scene, draws.get("cameras", {}))
        scene = _apply_gripper(scene, draws.get("gripper", {}).get("force", {}))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"randomised values that do not fit this run's scene: {exc!r}") from None
    section = randomization_of(run)
    noise = None if section is None or section.noise is None else RandomizationConfig(noise=section.noise)
    return dataclasses.replace(run, randomization=noise,
                               scene_config=dataclasses.replace(scene, randomization=None))


def _rgb(values, n: int = 3) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != n or not all(np.isfinite(out)):
        raise ValueError(f"expected {n} finite numbers, got {values!r}")
    return out


def _apply_look(scene, lighting: dict | None, colors: dict | None):
    look, table = scene.look, scene.table
    if lighting:
        look = dataclasses.replace(look, light_direction=_rgb(lighting["light_direction"]), **{
            k: (_rgb(v) if k == "light_color" else float(v)) for k, v in lighting.items() if k != "light_direction"})
    if colors and "table_rgb" in colors:
        if colors.get("table_textured"):
            look = dataclasses.replace(look, table_tint=_rgb(colors["table_rgb"]))
        else:
            table = dataclasses.replace(table, rgba=(*_rgb(colors["table_rgb"]), table.rgba[3]))
    return dataclasses.replace(scene, look=look, table=table)


def _apply_objects(scene, physics: dict, colors: dict):
    objects = []
    for obj in scene.objects:
        values, changes = physics.get(obj.name, {}), {}
        if obj.name in colors:
            changes["rgba"] = (*_rgb(colors[obj.name]), obj.rgba[3])
        if "mass_scale" in values:
            changes["mass"] = obj.mass * float(values["mass_scale"])
        if "friction" in values:
            changes["friction"] = float(values["friction"])
        if "size_scale" in values:
            changes.update(_scaled(obj, float(values["size_scale"])))
        objects.append(dataclasses.replace(obj, **changes))
    return dataclasses.replace(scene, objects=tuple(objects))


def _scaled(obj, s: float) -> dict:
    """An object's sizes times ``s``, its start (and start range) moved up by the change of its half height."""
    dz = (s - 1.0) * obj.half_height()
    lift = lambda p: (p[0], p[1], p[2] + dz)  # noqa: E731
    return {"size": tuple(x * s for x in obj.size), "radius": obj.radius * s, "height": obj.height * s,
            "scale": obj.scale * s, "pos": lift(obj.pos),
            "pos_range": None if obj.pos_range is None else (lift(obj.pos_range[0]), lift(obj.pos_range[1]))}


def _apply_cameras(scene, cameras: dict):
    out = []
    for cam in scene.cameras:
        d = cameras.get(cam.name)
        if d is None:
            out.append(cam)
        elif cam.link is None:
            out.append(dataclasses.replace(cam, eye=_rgb(d["eye"]), target=_rgb(d["target"]), fov=float(d["fov"])))
        else:
            out.append(dataclasses.replace(cam, offset_pos=_rgb(d["offset_pos"]),
                                           offset_quat=_rgb(d["offset_quat_wxyz"], 4), fov=float(d["fov"])))
    return dataclasses.replace(scene, cameras=tuple(out))


def _apply_gripper(scene, force: dict):
    robot = scene.robot
    gripper = robot.gripper if "" not in force else dataclasses.replace(robot.gripper, force=float(force[""]))
    grippers = tuple(dataclasses.replace(g, force=float(force[g.arm])) if g.arm in force else g for g in robot.grippers)
    return dataclasses.replace(scene, robot=dataclasses.replace(robot, gripper=gripper, grippers=grippers))


def noisy(run: RunConfig, env: int, state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Episode ``env``'s recorded state and action (n, k) with the run's noise added (unchanged without any)."""
    section = randomization_of(run)
    if section is None or section.noise is None:
        return state, action
    rng = generator(run, env, "noise")
    n = section.noise
    return (state + rng.normal(0.0, n.observation_std, state.shape) if n.observation_std else state,
            action + rng.normal(0.0, n.action_std, action.shape) if n.action_std else action)


def episode_runs(run: RunConfig, envs: np.ndarray) -> list[tuple[RunConfig, np.ndarray]] | None:
    """For a run whose episodes' scenes differ: each environment of ``envs`` with its own run; None otherwise."""
    section = randomization_of(run)
    if section is None or not section.scene_changes():
        return None
    return [(randomized(run, draw(run, int(e))), np.array([int(e)])) for e in envs]


def scene_record(run: RunConfig, env: int, scenes: list[EpisodeScene]) -> dict:
    """Episode ``env``'s line of ``meta/episode_scenes.jsonl`` beyond its index: its scene (``scenes[env]``, the
    run's draws of starts; with randomisation, those of the episode's own run, e.g. a resized object's start
    height), ``bodies``: every object's shape, size, mass and friction as built (app.episode.episode_scene
    .object_bodies) and, with randomisation, ``randomization``: its drawn values."""
    if randomization_of(run) is None:
        return {**scenes[env].as_dict(), "bodies": object_bodies(run)}
    draws = draw(run, env)
    own = randomized(run, draws)
    return {**run_scenes(own, run.n_envs or 1)[env].as_dict(), "bodies": object_bodies(own), "randomization": draws}


def episode_run(run: RunConfig, scene_line: dict) -> RunConfig:
    """The run an episode was recorded with, from its ``meta/episode_scenes.jsonl`` line (a replay's scene): the
    draws it holds applied (``run`` unchanged where it holds none)."""
    draws = scene_line.get("randomization")
    if draws is None:
        return run
    if not isinstance(draws, dict):
        raise InputError(f"an episode scene's randomization must be a mapping of drawn values, got {draws!r:.80}")
    return randomized(run, draws)
