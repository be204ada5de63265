"""A robot's spheres and boxes per link, fitted once per robot file and cached.

The cache file (JSON, written atomically) is keyed on the URDF text, the bytes of every mesh it uses, the
hand-tuned sphere file and the fitting version. Hand-tuned spheres, cuRobo's way, go in a YAML file beside
the URDF named ``<urdf name>.spheres.yaml`` (read by app.collision.sphere_file)::

    collision_spheres:
      link_6:
        - {center: [0.035, 0.0, 0.0], radius: 0.045}
    self_collision_ignore:          # optional: pairs never checked, besides those found by sampling
      link_6: [link_4]

A link listed there takes those spheres instead of fitted ones; its excess is still measured against the
URDF's shapes and a warning says how far its spheres leave any shape uncovered.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.collision.link_geometry import REACH, exact_parts, shape_box, shape_spheres
from app.collision.sampling import excess_over, mesh_samples
from app.collision.shapes import collision_shapes, files_key
from app.collision.sphere_file import read_sphere_file, sphere_yaml_path
from app.kinematics.model import KinematicModel
from app.kinematics.urdf import parse_urdf_string

log = logging.getLogger(__name__)
VERSION = b"spheres-7"  # 5: a moving link of boxes only is its boxes (exact), not spheres; 6: capsules 1 mm;
# 7: a link with a mesh keeps its shapes as exact convex parts


@dataclass(frozen=True)
class RobotSpheres:
    """Per-link collision primitives of one robot file, in link frames [m].

    Attributes:
        spheres: link name -> (k, 4) centre x, y, z and radius. boxes: link name -> list of (R (3, 3), p (3,),
        half (3,)) (links fixed to the base). excess: link name -> [m] upper bound on how far its primitives
        reach beyond its collision shapes. parts: link name -> [(vertices (v, 3), radius)], the exact convex shapes
        of a link whose shapes are all convex, with a hull's triangles (or None) (app.collision.packing); refine: the
        links with a mesh, whose pairs are measured on those parts. ignore: link pairs (sorted names) never checked, from the YAML.
        pairs: the checked link pairs and skipped: reason -> pairs, from app.collision.pairs (set on build).
        key: the cache key. samples: configurations sampled per seed to choose the pairs.
    """

    spheres: dict[str, np.ndarray]
    boxes: dict[str, list]
    excess: dict[str, float]
    ignore: frozenset = frozenset()
    pairs: tuple = ()
    skipped: dict = field(default_factory=dict)
    key: str = ""
    samples: int = 0
    parts: dict = field(default_factory=dict)
    refine: frozenset = frozenset()

    def to_json(self) -> dict:
        return {"version": VERSION.decode(), "key": self.key,
                "spheres": {k: v.tolist() for k, v in self.spheres.items()},
                "boxes": {k: [[np.asarray(x).tolist() for x in b] for b in v] for k, v in self.boxes.items()},
                "excess": self.excess, "ignore": sorted(map(list, self.ignore)),
                "pairs": [list(p) for p in self.pairs],
                "skipped": {k: [list(p) for p in v] for k, v in self.skipped.items()}, "samples": self.samples,
                "parts": {k: [[np.asarray(v).tolist(), r, None if f is None else np.asarray(f).tolist()]
                              for v, r, f in parts] for k, parts in self.parts.items()},
                "refine": sorted(self.refine)}

    @classmethod
    def from_json(cls, d: dict) -> RobotSpheres:
        return cls({k: np.array(v, dtype=float).reshape(-1, 4) for k, v in d["spheres"].items()},
                   {k: [tuple(np.array(x, dtype=float) for x in b) for b in v] for k, v in d["boxes"].items()},
                   {k: float(v) for k, v in d["excess"].items()}, frozenset(map(tuple, d["ignore"])),
                   tuple(map(tuple, d["pairs"])), {k: [tuple(p) for p in v] for k, v in d["skipped"].items()},
                   d["key"], int(d["samples"]),
                   {k: [(np.array(v, dtype=float).reshape(-1, 3), float(r),
                         None if f is None else np.array(f, dtype=np.int64).reshape(-1, 3)) for v, r, f in parts]
                    for k, parts in d["parts"].items()}, frozenset(d["refine"]))


def fit_robot(text: str, urdf_path: str, package_dirs=None, cached: bool = True) -> RobotSpheres:
    """Every link's primitives (no pairs yet), from the cache where a file of this key exists (then it
    carries its pairs too). See the module docstring for the YAML."""
    model = KinematicModel(parse_urdf_string(text, urdf_path))
    shapes, key = spheres_key(text, urdf_path, package_dirs)
    tuned, ignore = read_sphere_file(sphere_yaml_path(urdf_path), model.link_names)
    found = load_cached(key) if cached else None
    if found is not None:
        return found
    moving = model.movable_links
    spheres, boxes, excess, memo = {}, {}, {}, {}
    box_links = {sh.link for sh in shapes} - {sh.link for sh in shapes if sh.kind != "box"}  # only boxes: exact
    for shape in shapes:
        if shape.link in tuned:
            continue
        fixed = not moving[model.link_index(shape.link)]
        if (fixed and shape.kind in ("box", "mesh")) or shape.link in box_links:
            R, p, half, ex = shape_box(shape, memo)
            boxes.setdefault(shape.link, []).append((R, p, half))
        else:
            s, ex = shape_spheres(shape, memo=memo)
            spheres[shape.link] = np.concatenate([spheres.get(shape.link, np.zeros((0, 4))), s])
        excess[shape.link] = max(excess.get(shape.link, 0.0), ex)
    for link, s in tuned.items():
        spheres[link], excess[link] = s, _measured(link, s, [sh for sh in shapes if sh.link == link], urdf_path)
    meshes = frozenset(sh.link for sh in shapes if sh.kind == "mesh") - set(tuned)
    return RobotSpheres(spheres, boxes, excess, ignore, key=key, parts=exact_parts(shapes, set(tuned)), refine=meshes)


def spheres_key(text: str, urdf_path: str, package_dirs=None) -> tuple[list, str]:
    """The collision shapes of a description and its cache key (text, meshes, sphere YAML, fitting version)."""
    shapes, meshes = collision_shapes(text, urdf_path, package_dirs)
    yaml_path = sphere_yaml_path(urdf_path)
    raw = yaml_path.read_bytes() if yaml_path.is_file() else b""
    return shapes, files_key(text, meshes, [raw, VERSION, repr(REACH).encode()])


def _measured(link: str, spheres: np.ndarray, shapes: list, urdf_path: str) -> float:
    """Excess of hand-tuned spheres over a link's shapes (max over shapes); warns where they leave a shape's
    surface uncovered."""
    worst = 0.0
    for shape in shapes:
        if shape.hull is None:
            continue
        local = spheres.copy()
        local[:, :3] = (spheres[:, :3] - shape.p) @ shape.R
        surface, delta = mesh_samples(shape.hull, 0.002)
        gap = (np.linalg.norm(surface[:, None] - local[None, :, :3], axis=2) - local[None, :, 3]).min(axis=1).max()
        if gap > 0:
            log.warning("%s: hand-tuned spheres of link %s leave its shape uncovered by up to %.1f mm: distances "
                        "may then report clear where the shapes touch", urdf_path, link, 1e3 * gap)
        worst = max(worst, excess_over(local, surface, delta, shape.hull.planes, 0.002))
    return worst


def cache_dir() -> Path:
    """Folder of the cached sphere files (beside numba's cache)."""
    from app.kernels.cache import cache_root
    return cache_root() / "spheres"


def load_cached(key: str) -> RobotSpheres | None:
    path = cache_dir() / f"{key}.json"
    try:
        found = RobotSpheres.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if found.key == key else None


def store(found: RobotSpheres) -> None:
    """Write the cache file atomically (a temporary file in the same folder, then os.replace)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(found.to_json(), f)
        os.replace(tmp, folder / f"{found.key}.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


