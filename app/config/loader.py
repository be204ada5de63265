"""YAML -> validated frozen dataclasses. Every problem is a ConfigError naming the file, the key
path and what is allowed; nothing touches PyBullet or the disk's outputs before it passes."""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import re
import typing
from pathlib import Path

import yaml

from app.collision.object_urdf import check_object_file
from app.config.look_robot import load_drawn
from app.config.robots import check_start, checked_model, load_description, resolve_robots, rig_start
from app.config.schema import RunConfig, SceneConfig
from app.errors import AppError, ConfigError, InputError
from app.tasks import object_task
from app.validation import (
    CheckContext,
    Where,
    convert,
    in_file,
    key_path,
    raise_first,
    type_hints,
    unknown_key,
    yaml_syntax_error,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]


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
    if path.is_dir():
        raise ConfigError(f"{path}: a folder, not a YAML file")
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
    except yaml.YAMLError as exc:
        raise yaml_syntax_error(exc, path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}")
    return data


def _join(where: str, key: str) -> str:
    """A key path: ``file.yaml: a.b`` (``where`` ending in ':' names the file)."""
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}" if where else key


def build(cls: type, data: object, where: str):
    """Instance of dataclass ``cls`` from a mapping (or what its ``shorthand`` makes one of: ``look: kit``);
    unknown keys and wrong types are errors."""
    if not isinstance(data, dict) and hasattr(cls, "shorthand"):
        data = cls.shorthand(data)
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {data!r}")
    hints = type_hints(cls)
    fields = {f.metadata.get("key", f.name): f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    problem = cls.keys_problem(set(data)) if hasattr(cls, "keys_problem") else None  # keys that exclude each other
    missing = [k for k in getattr(cls, "REQUIRED_KEYS", ()) if k not in data]  # keys with no default a file may skip
    if problem or missing:
        raise ConfigError(f"{where}: {problem or f'missing key(s) {missing}; give {list(cls.REQUIRED_KEYS)}'}")
    kwargs = {}
    for key, value in data.items():  # a field's YAML key is its name, or the key its metadata gives
        if key not in fields:
            raise unknown_key(key, list(fields), where)
        name = fields[key].name
        kwargs[name] = _field(fields[key], hints[name], value, _join(where, key))
    return cls(**kwargs)


def _field(f: dataclasses.Field, hint: object, value: object, where: str):
    """A field's value: a section typed by its 'type' key (a list of them for a tuple field), else by its hint."""
    types = f.metadata.get("types")
    if not types:
        return convert(hint, value, where, ConfigError, build)
    if typing.get_origin(hint) is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list of sections, got {value!r}")
        return tuple(_typed(types, f.metadata["default_type"], v, f"{where}[{i}]") for i, v in enumerate(value))
    return _typed(types, f.metadata["default_type"], value, where, f.metadata.get("resolve"))


def _typed(types: dict[str, type], default: str, data: object, where: str, resolve=None):
    """A section typed by its 'type' key (default ``default``): that type's dataclass, only its keys valid.
    ``resolve(name) -> class | None`` finds a type the registry does not hold yet (a ``module:Class`` task)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {data!r}")
    name = data.get("type", default)
    if name not in types and resolve is not None and isinstance(name, str):
        try:
            found = resolve(name)
        except InputError as exc:
            raise ConfigError(f"{where}.type: {exc}") from None
        name = name if found is None else found.type  # registered under its own name as it was imported
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
    if not data and not sets:
        raise ConfigError(f"{path}: empty; a run config names at least its scene and task (see configs/)")
    for key, value in (sets or {}).items():
        data = deep_set(data, key, value, path.name)
    unknown = set(overrides) - {f.name for f in dataclasses.fields(RunConfig)}
    if unknown:
        raise ConfigError(f"unknown overrides {sorted(unknown)}")
    run = build(RunConfig, data, f"{path.name}:")
    run = dataclasses.replace(run, **{k: v for k, v in overrides.items() if v is not None}, name=path.stem)
    scene_path = resolve_path(run.scene, path.parent)
    scene_data = deep_merge(read_yaml(scene_path), run.scene_overrides or {})
    try:
        scene = build(SceneConfig, scene_data, f"{scene_path.name}:")
    except ConfigError as exc:  # a value the run's scene_overrides set is the run file's
        raise _overridden(exc, run, path.name, scene_path.name) from None
    scene = resolve_robots(scene, scene_data, f"{scene_path.name}:", lambda p: resolve_path(p, scene_path.parent))
    objects = tuple(dataclasses.replace(o, file=str(resolve_path(o.file, scene_path.parent))) if o.file else o
                    for o in scene.objects)
    look = scene.look if scene.look.robot_urdf is None else dataclasses.replace(  # the look's robot, as the robot's
        scene.look, robot_urdf=str(resolve_path(scene.look.robot_urdf, scene_path.parent)),
        robot_package_dirs=tuple(str(resolve_path(d, scene_path.parent)) for d in scene.look.robot_package_dirs))
    task = object_task(run.motion)  # a task's fixtures (a bin, a hole) join the scene's obstacles
    obstacles = scene.obstacles + (task.fixtures() if task is not None else ())
    run = dataclasses.replace(run, scene_config=dataclasses.replace(scene, objects=objects, look=look,
                                                                    obstacles=obstacles))
    return validate(run, path)


def _run_file(path: Path) -> Path:
    """The run file as given, else (a relative path) under the project root; a missing one names both places."""
    if path.exists() or path.is_absolute():
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


def validate(run: RunConfig, path: Path) -> RunConfig:
    """Value checks that types alone cannot express, each section's own (its ``checks``): a first pass without
    the robot, then the robot's description is read and parsed (once: kept as ``scene_config.description``), a
    rig's start pose composed, and a second pass checks the names of links and joints against its model."""
    at = in_file(path.name)
    ctx = CheckContext(run, run.scene_config, Where(lambda keys: _scene_key(run, path.name, keys)))
    raise_first(run.checks(at, ctx))
    check_object_meshes(run.scene_config, ctx.scene_at)
    scene = load_description(run.scene_config, ctx.scene_at)
    model = checked_model(scene, run.motion, ctx.scene_at, at)
    if scene.robots:
        scene = rig_start(scene, model, f"{run.scene}:")
    check_start(scene, model, ctx.scene_at)
    run = dataclasses.replace(run, scene_config=scene)
    ctx = CheckContext(run, scene, ctx.scene_at, model)
    raise_first(run.checks(at, ctx))
    return dataclasses.replace(run, scene_config=load_drawn(scene, run.scene))


def check_object_meshes(scene: SceneConfig, at: Where) -> None:
    """Every object's mesh or URDF file readable as PyBullet needs (app.collision.object_urdf.check_object_file: a
    broken mesh ends the process there, a URDF's negative sizes or NaN masses are simulated); ConfigError at the
    object's ``file`` key otherwise."""
    for i, obj in enumerate(scene.objects):
        try:
            check_object_file(obj.shape, obj.file, f"object {obj.name!r}")
        except AppError as exc:
            raise ConfigError(f"{at('objects', i, 'file')}: {exc}") from None


def _overridden(exc: ConfigError, run: RunConfig, run_file: str, scene_file: str) -> ConfigError:
    """``exc`` ("scene_file: key.path: message" of a scene value) named where the value came from: the run file's
    scene_overrides where they set it, else unchanged."""
    text, prefix = str(exc), f"{scene_file}: "
    if not text.startswith(prefix):
        return exc
    rest = text[len(prefix):]
    where, _, message = ("", "", rest) if rest.startswith("unknown key") else rest.partition(": ")
    if not message:
        return exc
    keys = tuple(int(i) if i else k for k, i in re.findall(r"([A-Za-z_]\w*)|\[(\d+)\]", where))
    unknown = re.match(r"unknown key '([^']+)'", message)
    if unknown:  # a key the scene does not have: the run file's, if its scene_overrides hold it there
        keys = (*keys, unknown.group(1))
        located = _scene_key(run, run_file, keys)
        return ConfigError(f"{located.rsplit('.', 1)[0]}: {message}") if "scene_overrides" in located else exc
    located = _scene_key(run, run_file, keys)
    return ConfigError(f"{located}: {message}") if "scene_overrides" in located else exc


def _scene_key(run: RunConfig, f: str, keys: tuple) -> str:
    """Where a scene value came from: the run file's scene_overrides if they set it (or, below a list, the list),
    else the scene file."""
    node = run.scene_overrides or {}
    for key in itertools.takewhile(lambda k: isinstance(k, str), keys):
        node = node.get(key) if isinstance(node, dict) else None
    if node is not None:
        return f"{f}: scene_overrides.{key_path(keys)}"
    return f"{run.scene}: {key_path(keys)}"
