"""One robot file -> its RobotSpheres with checked pairs (cached per file contents) -> a CollisionModel."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from app.collision.checker import CollisionModel
from app.collision.pairs import choose_pairs
from app.collision.robot_spheres import RobotSpheres, fit_robot, load_cached, store
from app.collision.world import World
from app.kinematics.description import read_description
from app.kinematics.model import KinematicModel
from app.kinematics.urdf import parse_urdf_string

log = logging.getLogger(__name__)


def robot_spheres(path: str, package_dirs: Sequence[str] | None = None,
                  xacro_args: Mapping[str, object] | None = None, cached: bool = True,
                  text: str | None = None, pairs: bool = True) -> RobotSpheres:
    """The spheres, boxes, excess and checked pairs of a robot file: from the cache, or fitted and sampled
    (seconds to a minute, once per file contents) and stored. ``text``: the description already read (a
    composed rig; ``path`` then only resolves relative meshes and the sphere YAML). ``pairs=False``: the
    primitives only, no pair sampling where the cache has none (a caller naming its own pairs); stored so, a
    later call with pairs samples them then."""
    text = read_description(str(path), package_dirs, xacro_args) if text is None else text
    found = fit_robot(text, str(path), package_dirs, cached)
    if found.samples == 0 and not pairs:
        if cached and load_cached(found.key) is None:
            store(found)
        return found
    if found.samples == 0:  # fresh fit: choose the pairs, then store
        log.info("%s: fitting collision spheres and sampling link pairs (once per file contents)", path)
        found = choose_pairs(KinematicModel(parse_urdf_string(text, str(path))), found)
        store(found)
    return found


def collision_model(model: KinematicModel, world: World | None = None, package_dirs: Sequence[str] | None = None,
                    xacro_args: Mapping[str, object] | None = None, text: str | None = None,
                    self_pairs: Sequence[tuple[str, str]] | None = None) -> CollisionModel:
    """A CollisionModel for ``model`` (loaded from a file: its path is read again for the geometry unless
    ``text`` gives the description); ``self_pairs``: see CollisionModel."""
    if model.spec.path is None:
        from app.errors import InputError
        raise InputError("a collision model needs the robot's file (the model was built from a string)")
    spheres = robot_spheres(model.spec.path, package_dirs, xacro_args, text=text, pairs=self_pairs is None)
    return CollisionModel(model, spheres, world, self_pairs)
