"""video.show_spheres: the collision spheres drawn as visual-only bodies that follow each link as PyBullet poses it."""

import numpy as np
import pybullet as pb

from app.sim.scene import Scene
from app.sim.sphere_markers import SphereMarkers
from tests.conftest import WIDOWX_URDF


def test_sphere_bodies_follow_pybullets_link_poses_and_never_collide():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF), base_pos=(0.1, 0.0, 0.02), base_quat=(0.9238795, 0.0, 0.0, 0.3826834))
    scene.build(n_envs=2, env_spacing=(1.5, 1.5))
    try:
        markers = SphereMarkers(robot)
        q = np.stack([robot.model.mid_config(), robot.model.mid_config()])
        q[1, :6] += 0.3
        robot.set_qpos(q)
        markers.update(q)
        primitives = robot.sphere_model((), ()).robot
        for env in range(2):
            body = robot.bodies[env]
            for marker, link in zip(markers.bodies[env], markers.links):
                name = robot.model.link_names[link]
                pos, orn = pb.getBasePositionAndOrientation(marker, physicsClientId=scene.client)
                if body.link_index[name] >= 0:  # a child link (PyBullet poses the root by its inertial frame)
                    ref_pos, ref_orn = pb.getLinkState(body.body_id, body.link_index[name], computeForwardKinematics=True,
                                                       physicsClientId=scene.client)[4:6]
                    np.testing.assert_allclose(pos, ref_pos, atol=1e-5)
                    assert abs(abs(np.dot(orn, ref_orn)) - 1.0) < 1e-6  # PyBullet keeps poses in single precision
                n = len(primitives.spheres.get(name, ())) + len(primitives.boxes.get(name, []))
                assert pb.getNumJoints(marker, physicsClientId=scene.client) == n
                assert not pb.getContactPoints(marker, physicsClientId=scene.client)
                assert not pb.getClosestPoints(marker, body.body_id, 0.0, physicsClientId=scene.client)
    finally:
        scene.close()
