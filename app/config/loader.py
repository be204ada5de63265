"""YAML -> validated frozen dataclasses. Every problem is a ConfigError naming the file, the key
path and what is allowed; nothing touches PyBullet or the disk's outputs before it passes."""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from pathlib import Path

import yaml

from app.config.schema import RunConfig, SceneConfig
from app.control.ik_controller import MODES, PoseIKControllerConfig
from app.control.tasks import PathTask
from app.errors import AppError, ConfigError
from app.kinematics.model import KinematicModel

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def read_yaml(path: Path) -> dict:
    """A YAML mapping from ``path``; syntax errors come with line and column."""
    if not path.is_file():
        raise ConfigError(f"{path}: file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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
        types = fields[key].metadata.get("types")
        kwargs[key] = _typed(types, fields[key].metadata["default_type"], value, _join(where, key)) if types \
            else _convert(hints[key], value, _join(where, key))
    return cls(**kwargs)


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
        owners = [t for t, c in types.items() if t != name and any(k in {f.name for f in dataclasses.fields(c)}
                                                                   for k in rest if k not in
                                                                   {f.name for f in dataclasses.fields(types[name])})]
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


def load_run_config(path: str | Path, **overrides) -> RunConfig:
    """Load and validate a run file and its scene; ``overrides`` replace top-level run fields."""
    path = Path(path)
    data = read_yaml(path)
    unknown = set(overrides) - {f.name for f in dataclasses.fields(RunConfig)}
    if unknown:
        raise ConfigError(f"unknown overrides {sorted(unknown)}")
    run = build(RunConfig, data, f"{path.name}:")
    run = dataclasses.replace(run, **{k: v for k, v in overrides.items() if v is not None}, name=path.stem)
    scene_path = resolve_path(run.scene, path.parent)
    scene_data = deep_merge(read_yaml(scene_path), run.scene_overrides or {})
    scene = build(SceneConfig, scene_data, f"{scene_path.name}:")
    urdf = resolve_path(scene.robot.urdf, scene_path.parent)
    package_dirs = tuple(str(resolve_path(d, scene_path.parent)) for d in scene.robot.package_dirs)
    scene = dataclasses.replace(scene, robot=dataclasses.replace(scene.robot, urdf=str(urdf), package_dirs=package_dirs))
    run = dataclasses.replace(run, scene_config=scene)
    validate(run, path)
    return run


def _check(ok: bool, where: str, message: str) -> None:
    if not ok:
        raise ConfigError(f"{where}: {message}")


def validate(run: RunConfig, path: Path) -> None:
    """Value checks that types alone cannot express: ranges, choices, files, link names."""
    f = path.name
    _check(run.n_envs is None or run.n_envs >= 1, f"{f}: n_envs", f"must be >= 1 (or omitted), got {run.n_envs}")
    _check(run.duration > 0, f"{f}: duration", f"must be > 0 s, got {run.duration}")
    c, t, v, s = run.controller, run.task, run.video, run.scene_config
    if isinstance(c, PoseIKControllerConfig):
        _check(c.mode in MODES, f"{f}: controller.mode", f"'{c.mode}' is not one of {list(MODES)}")
    _check(s.physics_hz > 0, _scene_key(run, f, "physics_hz"), f"must be > 0, got {s.physics_hz}")
    _check(c.control_hz is None or 0 < c.control_hz <= s.physics_hz, f"{f}: controller.control_hz",
           f"must be in (0, physics_hz={s.physics_hz}], got {c.control_hz}")
    _check(v.fps > 0, f"{f}: video.fps", f"must be > 0, got {v.fps}")
    for name, size in (("width", v.width or s.camera.width), ("height", v.height or s.camera.height)):
        _check(size >= 16 and size % 2 == 0, f"{f}: video.{name}", f"must be an even number >= 16 (H.264), got {size}")
    _check(not isinstance(t, PathTask) or len(t.waypoints) >= 2, f"{f}: task.waypoints",
           "a path needs at least 2 waypoints")
    _validate_robot(run, f)


def _scene_key(run: RunConfig, f: str, *keys: str) -> str:
    """Where a scene value came from: the run file's scene_overrides if they set it, else the scene file."""
    node = run.scene_overrides or {}
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    if node is not None:
        return f"{f}: scene_overrides.{'.'.join(keys)}"
    return f"{run.scene}: {'.'.join(keys)}"


def _validate_robot(run: RunConfig, f: str) -> None:
    """The description loads and every link and joint name the files use exists; errors name the file and key."""
    s = run.scene_config
    urdf = Path(s.robot.urdf)
    _check(urdf.is_file(), _scene_key(run, f, "robot", "urdf"), f"file not found: {urdf}")
    for key, value in (s.robot.xacro_args or {}).items():
        _check(isinstance(value, (str, int, float, bool)), _scene_key(run, f, "robot", "xacro_args", key),
               f"must be a string or a number, got {value!r}")
    try:
        model = KinematicModel.from_urdf(str(urdf), s.robot.package_dirs, s.robot.xacro_args)
    except AppError as exc:
        raise ConfigError(f"{_scene_key(run, f, 'robot', 'urdf')}: {exc}") from None
    names = [(_scene_key(run, f, "robot", "ee_link"), s.robot.ee_link)]
    names += [(f"{f}: task.links[{i}]", link) for i, link in enumerate(getattr(run.task, "links", ()))]
    names += [(f"{f}: controller.self_pairs[{i}][{k}]", link)
              for i, pair in enumerate(getattr(run.controller, "self_pairs", ())) for k, link in enumerate(pair)]
    for where, link in names:
        try:
            model.link_index(link)
        except AppError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    if s.robot.init_qpos is not None:
        try:
            model.check_q(s.robot.init_qpos, "init_qpos")
        except AppError as exc:
            raise ConfigError(f"{_scene_key(run, f, 'robot', 'init_qpos')}: {exc}") from None
