"""A collision model of our own: link spheres fitted to the URDF's collision geometry, the pairs worth
checking (found by sampling), world primitives, and signed distances with their Jacobians for a batch of
configurations in one compiled call. Pure numpy/scipy/numba: knows nothing about any simulator."""

from app.collision.build import collision_model, robot_spheres
from app.collision.checker import CollisionModel, holding_links
from app.collision.world import HeldObject, MovingObject, ObjectPoses, World, WorldBox, WorldSphere, object_spheres

__all__ = ["CollisionModel", "HeldObject", "MovingObject", "ObjectPoses", "World", "WorldBox", "WorldSphere",
           "collision_model", "holding_links", "object_spheres", "robot_spheres"]
