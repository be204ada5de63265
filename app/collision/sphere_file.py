"""The hand-tuned sphere file beside a URDF (``<urdf name>.spheres.yaml``, cuRobo's layout), read and checked.

Every problem is one line naming the file and the key path (``collision_spheres.link_6[2].radius``) and what is
allowed; YAML syntax errors give the line and column.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from app.errors import ConfigError
from app.validation import finite, unknown_key, yaml_syntax_error

MAX_LINK_SPHERES = 256  # hand-written spheres of one link (a fit makes at most 64 a shape)
TOP_KEYS = ("collision_spheres", "self_collision_ignore")
SPHERE_KEYS = ("center", "radius")
MAX_RADIUS, MAX_OFFSET = 2.0, 5.0  # [m] what a link sphere of any arm may be: larger is a unit or a typing mistake


def sphere_yaml_path(urdf_path: str) -> Path:
    """Where hand-tuned spheres for ``urdf_path`` are looked for."""
    path = Path(urdf_path)
    stem = path.name.removesuffix(".xacro").removesuffix(".urdf")
    return path.with_name(f"{stem}.spheres.yaml")


def read_sphere_file(path: Path, links: tuple[str, ...]) -> tuple[dict[str, np.ndarray], frozenset]:
    """``(spheres, ignore)`` from ``path`` (nothing where it is absent): link name -> (n, 4) rows x, y, z, r
    [m] in the link frame, and the link pairs (sorted names) never checked. ConfigError for anything else."""
    if not path.is_file():
        return {}, frozenset()
    doc = _document(path)
    spheres = {str(link): _link_rows(path, str(link), items)
               for link, items in _mapping(path, doc, "collision_spheres").items()}
    ignore = frozenset(tuple(sorted((str(a), str(b))))
                       for a, bs in _mapping(path, doc, "self_collision_ignore").items()
                       for b in _names(path, f"self_collision_ignore.{a}", bs))
    for name in sorted(set(spheres) | {n for pair in ignore for n in pair}):
        if name not in links:
            raise ConfigError(f"{path}: unknown link {name!r}; links: {list(links)}")
    return spheres, ignore


def _document(path: Path) -> dict:
    try:
        doc = yaml.safe_load(path.read_bytes())
    except yaml.YAMLError as exc:
        raise yaml_syntax_error(exc, path) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: the top level must be a mapping with {' and/or '.join(TOP_KEYS)}, "
                          f"got {type(doc).__name__}")
    for key in doc:
        if key not in TOP_KEYS:
            raise unknown_key(key, list(TOP_KEYS), f"{path}:")
    return doc


def _mapping(path: Path, doc: dict, key: str) -> dict:
    value = doc.get(key) or {}
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key} must map link names to lists, got {type(value).__name__} {value!r:.60}")
    return value


def _names(path: Path, where: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: {where} must be a list of link names (e.g. [link_4, link_5]), "
                          f"got {value!r:.60}")
    return value


def _link_rows(path: Path, link: str, items: object) -> np.ndarray:
    """A link's spheres as rows (x, y, z, r), shape (n, 4)."""
    where = f"collision_spheres.{link}"
    if not isinstance(items, list):
        raise ConfigError(f"{path}: {where} must be a list of {{center: [x, y, z], radius: r}}, got {items!r:.60}")
    if not items:
        raise ConfigError(f"{path}: {where}: an empty list; give the link's spheres, or leave the link out (its "
                          "spheres are then fitted to its collision shapes)")
    if len(items) > MAX_LINK_SPHERES:
        raise ConfigError(f"{path}: {where}: {len(items)} spheres; a link takes at most {MAX_LINK_SPHERES} "
                          "(every distance query goes through each of them)")
    return np.array([_sphere_row(path, f"{where}[{k}]", s) for k, s in enumerate(items)], dtype=float).reshape(-1, 4)


def _sphere_row(path: Path, where: str, sphere: object) -> list[float]:
    if not isinstance(sphere, dict) or set(sphere) != set(SPHERE_KEYS):
        raise ConfigError(f"{path}: {where} must be {{center: [x, y, z], radius: r}} (keys {list(SPHERE_KEYS)}), "
                          f"got {sphere!r:.60}")
    center, radius = sphere["center"], sphere["radius"]
    if not isinstance(center, list) or len(center) != 3 or not all(finite(v) for v in center):
        raise ConfigError(f"{path}: {where}.center must be three finite numbers [m] (true/false are not numbers), "
                          f"got {center!r:.60}")
    if not finite(radius) or radius <= 0:
        raise ConfigError(f"{path}: {where}.radius must be a finite number > 0 [m] (true/false are not numbers), "
                          f"got {radius!r:.60}")
    if radius > MAX_RADIUS or float(np.linalg.norm(center)) > MAX_OFFSET:
        raise ConfigError(f"{path}: {where}: a sphere of radius {radius:g} m at {center} m from the link frame; a "
                          f"link's sphere is at most {MAX_RADIUS:g} m in radius and {MAX_OFFSET:g} m from its frame")
    return [*center, radius]
