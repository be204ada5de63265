"""YAML -> validated frozen dataclasses. Every problem is a ConfigError naming the file, the key
path and what is allowed; nothing touches PyBullet or the disk's outputs before it passes."""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import types
import typing
from pathlib import Path

import yaml

from app.config.manipulation_checks import gripper_checks, object_checks, task_checks
from app.config.robots import check_links, motion_links, resolve_robots, rig_start, robot_model
from app.config.schema import RunConfig, SceneConfig
from app.control.ik_controller import MODES, PoseIKControllerConfig
from app.control.motions import PathMotion
from app.errors import AppError, ConfigError
from app.kinematics.model import KinematicModel

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MAX_DURATION = 3600.0  # [s] of simulated time in one run
MAX_VIDEO_GB = 2.0  # video frames are held in memory until encoded
MAX_ENVS_CEILING = 65536  # the largest max_envs a run file may set
MAX_STALL_WINDOW = 10 ** 6  # [ticks] of error history kept per environment for stall detection
MAX_ROWS = 1000  # collision rows per environment in the QP


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' given twice (first on line {seen[key] + 1}); keep one", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UniqueKeyLoader.construct_mapping)


def read_yaml(path: Path) -> dict:
    """A YAML mapping from ``path``; syntax errors come with line and column."""
    if not path.is_file():
        raise ConfigError(f"{path}: file not found")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a safe loader
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply for a config (mappings or lists within each other)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: YAML syntax error: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML error: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}")
    return data


def _unknown_key(key: str, valid: list[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(str(key), valid, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ConfigError(f"{where}: unknown key '{key}'{hint} valid keys: {sorted(valid)}")


def _convert(hint: object, value: object, where: str) -> object:
    """``value`` converted to the type ``hint`` or a ConfigError saying what was expected."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(inner, value, where)
    if dataclasses.is_dataclass(hint):
        return build(hint, value, where)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(f"{where}: expected a list of {len(args)} values, got {len(value)}: {value!r}")
        return tuple(_convert(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(f"{where}: must be a finite number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint in (bool, str) or hint is dict:
        if not isinstance(value, hint):
            raise ConfigError(f"{where}: expected {hint.__name__}, got {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported field type {hint}")  # pragma: no cover - schema bug


def _join(where: str, key: str) -> str:
    """A key path: ``file.yaml: a.b`` (``where`` ending in ':' names the file)."""
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}" if where else key


def build(cls: type, data: object, where: str):
    """Instance of dataclass ``cls`` from a mapping; unknown keys and wrong types are errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            raise _unknown_key(key, list(fields), where)
        kwargs[key] = _field(fields[key], hints[key], value, _join(where, key))
    return cls(**kwargs)


def _field(f: dataclasses.Field, hint: object, value: object, where: str):
    """A field's value: a section typed by its 'type' key (a list of them for a tuple field), else by its hint."""
    types = f.metadata.get("types")
    if not types:
        return _convert(hint, value, where)
    if typing.get_origin(hint) is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list of sections, got {value!r}")
        return tuple(_typed(types, f.metadata["default_type"], v, f"{where}[{i}]") for i, v in enumerate(value))
    return _typed(types, f.metadata["default_type"], value, where)


def _typed(types: dict[str, type], default: str, data: object, where: str):
    """A section typed by its 'type' key (default ``default``): that type's dataclass, only its keys valid."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {data!r}")
    name = data.get("type", default)
    if name not in types:
        close = difflib.get_close_matches(str(name), list(types), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ConfigError(f"{where}.type: '{name}'{hint} is not one of {list(types)}")
    rest = {k: v for k, v in data.items() if k != "type"}
    try:
        return build(types[name], rest, where)
    except ConfigError as exc:
        keys_of = {t: {f.name for f in dataclasses.fields(c)} for t, c in types.items()}
        foreign = [k for k in rest if k not in keys_of[name]]
        owners = [t for t, keys in keys_of.items() if t != name and any(k in keys for k in foreign)]
        if "unknown key" in str(exc) and owners:
            raise ConfigError(f"{exc} (type '{name}'; that key belongs to type {owners})") from None
        raise


def deep_merge(base: dict, override: dict) -> dict:
    """``base`` with ``override`` merged in, nested mappings merged key by key."""
    out = dict(base)
    for key, value in override.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def resolve_path(path: str, config_dir: Path) -> Path:
    """A path as given (absolute or relative to the working directory), else relative to the config
    file's folder, else to the project root."""
    for base in (Path.cwd(), config_dir, PROJECT_ROOT):
        cand = Path(path) if Path(path).is_absolute() else base / path
        if cand.exists():
            return cand.resolve()
    return Path(path)


def load_run_config(path: str | Path, sets: dict[str, object] | None = None, **overrides) -> RunConfig:
    """Load and validate a run file and its scene; ``sets`` ({"controller.gain": 2.0, ...}: dotted keys) are
    written into the file's data before it is read, checked as if they were in it; ``overrides`` replace
    top-level run fields."""
    path = _run_file(Path(path))
    data = read_yaml(path)
    for key, value in (sets or {}).items():
        data = deep_set(data, key, value, path.name)
    unknown = set(overrides) - {f.name for f in dataclasses.fields(RunConfig)}
    if unknown:
        raise ConfigError(f"unknown overrides {sorted(unknown)}")
    run = build(RunConfig, data, f"{path.name}:")
    run = dataclasses.replace(run, **{k: v for k, v in overrides.items() if v is not None}, name=path.stem)
    scene_path = resolve_path(run.scene, path.parent)
    scene_data = deep_merge(read_yaml(scene_path), run.scene_overrides or {})
    scene = build(SceneConfig, scene_data, f"{scene_path.name}:")
    scene = resolve_robots(scene, scene_data, f"{scene_path.name}:", lambda p: resolve_path(p, scene_path.parent))
    if scene.robots:
        try:
            scene = rig_start(scene, robot_model(scene), f"{scene_path.name}:")
        except ConfigError:
            raise
        except AppError as exc:
            raise ConfigError(f"{scene_path.name}: robots: {exc}") from None
    objects = tuple(dataclasses.replace(o, file=str(resolve_path(o.file, scene_path.parent))) if o.file else o
                    for o in scene.objects)
    scene = dataclasses.replace(scene, objects=objects)
    run = dataclasses.replace(run, scene_config=scene)
    validate(run, path)
    return run


def _run_file(path: Path) -> Path:
    """The run file as given, else (a relative path) under the project root; a missing one names both places."""
    if path.is_file() or path.is_absolute():
        return path
    if (PROJECT_ROOT / path).is_file():
        return PROJECT_ROOT / path
    raise ConfigError(f"{path}: file not found (looked in the working directory {Path.cwd()} and in the project "
                      f"{PROJECT_ROOT}); give an absolute path or one relative to either")


def deep_set(data: object, dotted: str, value: object, where: str) -> dict:
    """``data`` (a mapping) with ``dotted`` ("controller.gain") set to ``value``; intermediate sections made."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the file must be a mapping of keys to set {dotted}")
    parts = dotted.split(".")
    if not all(parts):
        raise ConfigError(f"--set {dotted!r}: keys are dotted names such as controller.gain")
    out = dict(data)
    node = out
    for part in parts[:-1]:
        child = node.get(part)
        if child is not None and not isinstance(child, dict):
            raise ConfigError(f"{where}: {part} is not a section, cannot set {dotted}")
        node[part] = dict(child or {})
        node = node[part]
    node[parts[-1]] = value
    return out


def _check(ok: bool, where: str, message: str) -> None:
    if not ok:
        raise ConfigError(f"{where}: {message}")


def validate(run: RunConfig, path: Path) -> None:
    """Value checks that types alone cannot express: ranges, choices, files, link names."""
    f = path.name
    c, s = run.controller, run.scene_config
    key = lambda *keys: _scene_key(run, f, *keys)  # noqa: E731
    for where, ok, message in (_run_checks(run, f) + _scene_checks(run, f) + _controller_checks(c, s, f)
                               + object_checks(run, key, f) + task_checks(run, f)):
        _check(ok, where, message)
    model = _validate_robot(run, f)
    for where, ok, message in gripper_checks(run, model, key) + camera_checks(run, model, key):
        _check(ok, where, message)


def check_file_name(name: str, suffix: str) -> str | None:
    """Why ``name`` is not a plain, visible file name ending in ``suffix`` (None when it is)."""
    if not isinstance(name, str) or not name.strip():
        return f"must be a file name, got {name!r}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return f"must be a file name without newlines or control characters, got {name!r}"
    if "/" in name or "\\" in name or name in (".", "..") or os.path.isabs(name):
        return f"must be a plain file name in the output folder (no folders, no absolute path), got {name!r}"
    if not name.lower().endswith(suffix) or len(name) <= len(suffix) or name.startswith("."):
        return f"must be a visible file name ending in {suffix}, got {name!r}"
    return None


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _run_checks(run: RunConfig, f: str) -> list[tuple]:
    """(where, ok, message) of the run file's values: counts, time, seed, output names, resources."""
    v, cam, t = run.video, run.scene_config.camera, run.task
    w, h = v.width or cam.width, v.height or cam.height
    size_key = lambda k: f"{f}: video.{k}" if getattr(v, k) else _scene_key(run, f, "camera", k)  # noqa: E731
    frames = math.ceil(run.duration * v.fps) + 1 if _finite(run.duration) and run.duration <= MAX_DURATION else 0
    step = 1.0 / run.scene_config.physics_hz if run.scene_config.physics_hz > 0 else 0.0  # its range checked below
    gigabytes = frames * w * h * 3 / 1e9
    checks = [
        (f"{f}: workers", 1 <= run.workers <= max(1, run.n_envs or 1),
         f"must be 1..n_envs={run.n_envs or 1} processes (each needs an environment), got {run.workers}"),
        (f"{f}: max_envs", 1 <= run.max_envs <= MAX_ENVS_CEILING,
         f"must be 1..{MAX_ENVS_CEILING} (each environment costs ~20 MB and build time), got {run.max_envs}"),
        (f"{f}: n_envs", run.n_envs is None or 1 <= run.n_envs <= run.max_envs,
         f"must be 1..max_envs={run.max_envs} (or omitted), got {run.n_envs}; set max_envs to allow more"),
        (f"{f}: duration", _finite(run.duration) and 0 < run.duration <= MAX_DURATION,
         f"must be a finite time in (0, {MAX_DURATION:g}] s, got {run.duration}"),
        (f"{f}: duration", not _finite(run.duration) or run.duration * (1 + 1e-9) >= step,
         f"must be at least one physics step (the first control tick), 1/physics_hz = {step:.6g} s, got "
         f"{run.duration:g} s"),
        (f"{f}: seed", 0 <= run.seed < 2 ** 32, f"must be in 0..2**32-1, got {run.seed}"),
        (f"{f}: video.fps", 1 <= v.fps <= 240, f"must be 1..240 frames per second, got {v.fps}"),
        (size_key("width"), 16 <= w <= 4096 and w % 2 == 0, f"must be an even number in 16..4096 (H.264), got {w}"),
        (size_key("height"), 16 <= h <= 4096 and h % 2 == 0, f"must be an even number in 16..4096 (H.264), got {h}"),
        (f"{f}: video", not v.enabled or gigabytes <= MAX_VIDEO_GB,
         f"{frames} frames of {w}x{h} would hold {gigabytes:.1f} GB in memory (limit {MAX_VIDEO_GB} GB); lower "
         "video.fps, the size or the duration, or run with --no-video"),
        (f"{f}: video.follow_env", v.follow_env is None or 0 <= v.follow_env < (run.n_envs or 1),
         f"must be an environment index in 0..{(run.n_envs or 1) - 1} (or omitted), got {v.follow_env}"),
        (f"{f}: video.framing", v.framing in ("auto", "scene"), f"must be 'auto' or 'scene', got {v.framing!r}"),
        (f"{f}: video.workers", v.workers is None or 0 <= v.workers <= 32,
         f"must be 0..32 render processes (0: render in this process; omitted: one per CPU), got {v.workers}"),
        (f"{f}: task.waypoints", not isinstance(t, PathMotion) or len(t.waypoints) >= 2, "a path needs at least 2 waypoints"),
        (f"{f}: task.motions", t.type != "arms" or len(t.motions) >= 1, "an arms task needs a motion for each arm it "
         "moves (at least one); none would track nothing"),
        (f"{f}: task.quat", any(getattr(t, "quat", (1.0,))), "must be a nonzero (w, x, y, z) quaternion"),
        (f"{f}: task", _task_ok(t), "radius and gaps must be >= 0, speed > 0, angular_speed_range low <= high"),
    ]
    for key, name, suffix in (("video.filename", v.filename, ".mp4"), ("report.filename", run.report.filename, ".json"),
                              ("report.plot_filename", run.report.plot_filename, ".png")):
        problem = check_file_name(name, suffix)
        checks.append((f"{f}: {key}", problem is None, problem))
    return checks


def _task_ok(t) -> bool:
    if t.type in ("pick_place", "handover"):  # their own checks (app.config.manipulation_checks) name each key
        return True
    return (getattr(t, "radius", 0.0) >= 0 and getattr(t, "gap", 0.0) >= 0 and getattr(t, "gap_amplitude", 0.0) >= 0
            and getattr(t, "speed", 1.0) > 0
            and (not hasattr(t, "angular_speed_range") or t.angular_speed_range[0] <= t.angular_speed_range[1]))


def _scene_checks(run: RunConfig, f: str) -> list[tuple]:
    """(where, ok, message) of the scene's values: physics rate, camera, boxes, base pose."""
    s = run.scene_config
    cam = s.camera
    checks = [
        (_scene_key(run, f, "physics_hz"), 1 <= s.physics_hz <= 10000, f"must be in [1, 10000] Hz, got {s.physics_hz}"),
        (_scene_key(run, f, "camera", "fov"), 0 < cam.fov < 180, f"must be in (0, 180) degrees, got {cam.fov}"),
        (_scene_key(run, f, "camera", "eye"), math.dist(cam.eye, cam.target) > 1e-6,
         f"must differ from camera.target, got eye {cam.eye} and target {cam.target}"),
        (_scene_key(run, f, "robot", "base_quat"), any(s.robot.base_quat), "must be a nonzero (w, x, y, z) quaternion"),
        (_scene_key(run, f, "solver_iterations"), s.solver_iterations is None or 1 <= s.solver_iterations <= 1000,
         f"must be 1..1000 (or omitted: PyBullet's 50), got {s.solver_iterations}"),
    ]
    for key, box in [("table", s.table), ("floor", s.floor)] + [(f"obstacles[{i}]", b) for i, b in enumerate(s.obstacles)]:
        if box is not None:
            checks.append((_scene_key(run, f, key.split("[")[0], "size"), all(x > 0 for x in box.size),
                           f"{key}.size: every side must be > 0 m, got {box.size}"))
            checks.append((_scene_key(run, f, key.split("[")[0], "rgba"), all(0 <= x <= 1 for x in box.rgba),
                           f"{key}.rgba: values must be in [0, 1], got {box.rgba}"))
    names = [b.name for b in (s.table, s.floor, *s.obstacles) if b is not None]
    twice = sorted({n for n in names if names.count(n) > 1})
    checks.append((_scene_key(run, f, "obstacles"), not twice, f"box name(s) {twice} used twice (table, floor and "
                   "obstacles need their own names)"))
    return checks


def _not_parallel(a, b) -> bool:
    cross = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    return math.hypot(*cross) > 1e-6 * max(math.hypot(*a) * math.hypot(*b), 1e-12)


def camera_checks(run: RunConfig, model: KinematicModel, key) -> list[tuple]:
    """(where, ok, message) of the scene's named cameras (``cameras:``): names, links, sizes, rates, optics."""
    cams = run.scene_config.cameras
    names = [c.name for c in cams]
    fixed = [c.name for c in cams if c.link is None]
    checks = [(key("cameras"), len(set(names)) == len(names), f"camera names must differ, got {names}"),
              (f"{run.name}.yaml: video.camera", run.video.camera is None or run.video.camera in fixed,
               f"{run.video.camera!r} is not a fixed camera of the scene; fixed cameras: {fixed}")]
    for i, c in enumerate(cams):
        k = lambda field, i=i: key("cameras") + f"[{i}].{field}"  # noqa: E731
        checks += [
            (k("name"), c.name.replace("_", "").isalnum(), f"letters, digits and _ only (a dataset key), got {c.name!r}"),
            (k("link"), c.link is None or c.link in model.link_names,
             f"unknown link {c.link!r}; links: {list(model.link_names)}"),
            (k("width"), 16 <= c.width <= 4096 and c.width % 2 == 0, f"must be even, 16..4096 px, got {c.width}"),
            (k("height"), 16 <= c.height <= 4096 and c.height % 2 == 0, f"must be even, 16..4096 px, got {c.height}"),
            (k("fps"), 0 < c.fps <= 1000, f"must be in (0, 1000] Hz, got {c.fps}"),
            (k("fov"), 0 < c.fov < 180, f"must be in (0, 180) degrees, got {c.fov}"),
            (k("near"), 0 < c.near < c.far, f"must be > 0 and below far={c.far} m, got {c.near}"),
            (k("offset_quat"), any(c.offset_quat), "must be a nonzero (w, x, y, z) quaternion"),
            (k("eye"), c.link is not None or math.dist(c.eye, c.target) > 1e-6, "must differ from target"),
            (k("up"), c.link is not None or _not_parallel(c.up, [t - e for t, e in zip(c.target, c.eye)]),
             "must not be parallel to the line of sight (target - eye)"),
        ]
    return checks


def _controller_checks(c, s: SceneConfig, f: str) -> list[tuple]:
    """(where, ok, message) of the controller section's values."""
    k = f"{f}: controller"
    checks = [(f"{k}.control_hz", c.control_hz is None or 0 < c.control_hz <= s.physics_hz,
               f"must be in (0, physics_hz={s.physics_hz}], got {c.control_hz}"),
              (f"{k}.stall_window", 1 <= c.stall_window <= MAX_STALL_WINDOW,
               f"must be 1..{MAX_STALL_WINDOW} ticks (a window of error history per environment), got "
               f"{c.stall_window}"),
              (f"{k}.stall_tol", c.stall_tol > 0, f"must be > 0 m, got {c.stall_tol}")]
    if isinstance(c, PoseIKControllerConfig):
        return checks + [
            (f"{k}.mode", c.mode in MODES, f"'{c.mode}' is not one of {list(MODES)}"),
            (f"{k}.pos_tol", c.pos_tol > 0, f"must be > 0 m, got {c.pos_tol}"),
            (f"{k}.rot_tol", c.rot_tol > 0, f"must be > 0 rad, got {c.rot_tol}"),
            (f"{k}.max_iters", c.max_iters >= 1, f"must be >= 1, got {c.max_iters}"),
            (f"{k}.max_restarts", c.max_restarts >= 0, f"must be >= 0, got {c.max_restarts}")]
    return checks + [
        (f"{k}.gain", c.gain > 0, f"must be > 0 1/s, got {c.gain}"),
        (f"{k}.velocity_scale", 0 < c.velocity_scale <= 1, f"must be in (0, 1], got {c.velocity_scale}"),
        (f"{k}.accel_max", c.accel_max is None or c.accel_max > 0, f"must be > 0 (or omitted), got {c.accel_max}"),
        (f"{k}.d_safe", c.d_safe >= 0, f"must be >= 0 m, got {c.d_safe}"),
        (f"{k}.gamma", 0 < c.gamma <= 1, f"must be in (0, 1], got {c.gamma}"),
        (f"{k}.detection_distance", c.detection_distance > c.d_safe,
         f"must exceed d_safe={c.d_safe} m, got {c.detection_distance}"),
        (f"{k}.max_rows", 1 <= c.max_rows <= MAX_ROWS,
         f"must be 1..{MAX_ROWS} collision rows per environment (each is a QP constraint), got {c.max_rows}"),
        (f"{k}.collision_model", c.collision_model in ("pybullet", "spheres"),
         f"must be 'pybullet' (the simulator's closest points) or 'spheres' (the link spheres), got "
         f"{c.collision_model!r}"),
        (f"{k}.posture_weight", c.posture_weight >= 0, f"must be >= 0, got {c.posture_weight}"),
        (f"{k}.posture_gain", c.posture_gain >= 0, f"must be >= 0 1/s, got {c.posture_gain}")]


def _scene_key(run: RunConfig, f: str, *keys: str) -> str:
    """Where a scene value came from: the run file's scene_overrides if they set it, else the scene file."""
    node = run.scene_overrides or {}
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    if node is not None:
        return f"{f}: scene_overrides.{'.'.join(keys)}"
    return f"{run.scene}: {'.'.join(keys)}"


def _validate_robot(run: RunConfig, f: str) -> KinematicModel:
    """The description loads and every link and joint name the files use exists; errors name the file and key."""
    s = run.scene_config
    if not s.robots:
        urdf = Path(s.robot.urdf)
        _check(urdf.is_file(), _scene_key(run, f, "robot", "urdf"), f"file not found: {urdf}")
    for i, r in enumerate(s.robots or (s.robot,)):
        for key, value in (r.xacro_args or {}).items():
            where = f"{run.scene}: robots[{i}].xacro_args.{key}" if s.robots else \
                _scene_key(run, f, "robot", "xacro_args", key)
            _check(isinstance(value, (str, int, float, bool)), where, f"must be a string or a number, got {value!r}")
    try:
        model = robot_model(s)
    except AppError as exc:
        raise ConfigError(f"{_scene_key(run, f, 'robots') if s.robots else _scene_key(run, f, 'robot', 'urdf')}: "
                          f"{exc}") from None
    names = [] if s.robots else [(_scene_key(run, f, "robot", "ee_link"), s.robot.ee_link)]
    names += [(_scene_key(run, f, "robot", "arms", arm), link) for arm, link in (s.robot.arms or {}).items()
              if not s.robots]
    names += [(f"{f}: {key}", link) for key, link in motion_links(run.task, s.robot)]
    names += [(f"{f}: controller.self_pairs[{i}][{k}]", link)
              for i, pair in enumerate(getattr(run.controller, "self_pairs", ())) for k, link in enumerate(pair)]
    check_links(model, names)
    if s.robot.init_qpos is not None:
        try:
            model.check_window(model.check_q(s.robot.init_qpos, "init_qpos"), "init_qpos")
        except AppError as exc:
            where = f"{run.scene}: robots[].init_qpos" if s.robots else _scene_key(run, f, 'robot', 'init_qpos')
            raise ConfigError(f"{where}: {exc}") from None
    return model
