"""The scene robot's collision queries and planning (a part of app.sim.robot.Robot): PyBullet's distance rows for the
controllers, the link-sphere models against the scene (app.sim.sphere_world), and Genesis's ``plan_path``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.collision import CollisionModel, robot_spheres
from app.ik.limits.distance import CollisionPairs, DistanceRows, GraspState
from app.sim.collision import distance_rows
from app.sim.planning_worlds import scene_collisions
from app.sim.sphere_world import SceneObjects, sphere_model


class RobotCollisions:
    """What Robot answers about contact and clearance (mixed into app.sim.robot.Robot, whose state it reads)."""

    def distance_rows(self, q: np.ndarray, pairs: CollisionPairs, grasp: GraspState | None = None) -> DistanceRows:
        """app.control.robot_protocol.ControlledRobot: PyBullet's close pairs at q (n_envs, n_dofs) as rows, less
        those the motion's ``grasp`` means to touch."""
        return distance_rows(self, pairs, q, self.box_ids, grasp)

    @property
    def description_text(self) -> str:
        """The robot description as loaded (URDF text)."""
        return self._text

    def sphere_model(self, boxes: Sequence[str] | None = None,
                     self_pairs: Sequence[tuple[str, str]] | None = None, objects: Sequence[str] = ()
                     ) -> CollisionModel:
        """The link spheres against the scene's boxes ``boxes`` (None: all) in the base frame and its objects
        ``objects`` (poses each tick: :meth:`sphere_state`), checking ``self_pairs`` (None: the sampled pairs); see
        app.sim.sphere_world."""
        self._require_built()
        key = (None if boxes is None else tuple(boxes), None if self_pairs is None else tuple(map(tuple, self_pairs)),
               tuple(objects))
        if key not in self._sphere_models:  # built once per set of boxes, pairs and objects
            self._sphere_models[key] = sphere_model(self, boxes, self_pairs, objects)
        return self._sphere_models[key]

    def planning_spheres(self):
        """The robot's spheres with their sampled self pairs (app.collision.robot_spheres), read once."""
        if self._planning_spheres is None:
            self._planning_spheres = robot_spheres(self.urdf, self.package_dirs, text=self._text)
        return self._planning_spheres

    def planning_collisions(self, envs_idx: object = None, ee_link_name: str | None = None,
                            with_entity: object = None) -> dict[int, CollisionModel]:
        """Per addressed environment (its index -> a CollisionModel): the robot's spheres against that
        environment's boxes and its objects where they are now, ``with_entity`` (a SceneObject or its name)
        held by ``ee_link_name`` at its pose now; what app.planning.scene_api.plan_path plans against (see
        app.sim.planning_worlds)."""
        return scene_collisions(self, envs_idx, ee_link_name, with_entity)

    def plan_path(self, qpos_goal, qpos_start=None, max_nodes: int = 2000, resolution: float = 0.05,
                  timeout: float | None = None, max_retry: int = 1, smooth_path: bool = True,
                  num_waypoints: int | None = 300, ignore_collision: bool = False, planner: str = "RRTConnect",
                  envs_idx=None, return_valid_mask: bool = False, *, ee_link_name: str | None = None,
                  with_entity=None, **options):
        """Genesis's ``RigidEntity.plan_path``, with its names, order, defaults and shapes: one collision-free path
        per addressed environment, each planned against its own objects; see app.planning.scene_api.plan_path
        (``options``: its keywords beyond Genesis's). Needs the 'plan' extra (OMPL), imported on the first call."""
        from app.planning.scene_api import plan_path  # noqa: PLC0415 - OMPL only where a plan is asked for

        return plan_path(self, qpos_goal, qpos_start, max_nodes, resolution, timeout, max_retry, smooth_path,
                         num_waypoints, ignore_collision, planner, envs_idx, return_valid_mask,
                         ee_link_name=ee_link_name, with_entity=with_entity, **options)

    def sphere_state(self, collision: CollisionModel, q: np.ndarray, grasp: GraspState | None = None) -> tuple:
        """For sphere rows of ``collision`` at the measured q (n_envs, n_dofs): its objects' poses now (ObjectPoses,
        None without objects) and per environment the pairs left unwatched, from the motion's ``grasp``
        (its released pairs, the fingers on released objects, the holding gripper on a held one)."""
        grasp = grasp or GraspState.nothing(self.n_envs)
        if not collision.object_names:
            return None, list(grasp.released_pairs)
        if id(collision) not in self._scene_objects:
            self._scene_objects[id(collision)] = SceneObjects(self, collision)
        return self._scene_objects[id(collision)](q, grasp)
